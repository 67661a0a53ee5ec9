"""What sandboxed code cannot do: reach the network, read or write the host, see the harness's
secrets, outlive its timeout, exhaust processes or memory. Real sandbox, real attempts."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_toolpolicy.primitives.bwrap import python_prefixes
from pytest_toolpolicy.primitives.execute import execute
from pytest_toolpolicy.primitives.run_test import run_test
from pytest_toolpolicy.primitives.sandbox import Sandbox, SandboxLimits

from .proc_helpers import daemonizer_code, probe_cgroups, processes_with

CHECKOUT = Path(__file__).resolve().parents[2]
SECRETS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "TOOLPOLICY_TEST_SECRET")


@pytest.fixture(scope="module")
def sandbox(bwrap_sandbox: Sandbox) -> Sandbox:
    return bwrap_sandbox


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "tests").mkdir(parents=True)
    return root


@pytest.fixture
def host_server() -> Iterator[socket.socket]:
    """A TCP server on the host's loopback; nothing in the sandbox may reach it."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.setblocking(False)
    with socket.create_connection(server.getsockname(), timeout=1):  # reachable from the host
        pass
    server.accept()[0].close()
    yield server
    with pytest.raises(BlockingIOError):  # and nobody else ever connected
        server.accept()
    server.close()


NET_PROBE = """
import json, os, socket
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=1).close()
    reached = True
except OSError:
    reached = False
names = [line.split(":")[0].strip() for line in open("/proc/net/dev").readlines()[2:]]
print(json.dumps({{"reached": reached, "interfaces": names, "ifs": [n for _, n in socket.if_nameindex()]}}))
"""


def test_execute_has_no_network(sandbox: Sandbox, host_server: socket.socket):
    code = NET_PROBE.format(port=host_server.getsockname()[1])
    data = execute(sandbox, code, timeout=10)["data"]
    assert json.loads(data["stdout"]) == {"reached": False, "interfaces": ["lo"], "ifs": ["lo"]}


def test_run_test_has_no_network(sandbox: Sandbox, ws: Path, host_server: socket.socket):
    code = NET_PROBE.format(port=host_server.getsockname()[1])
    (ws / "tests" / "test_net.py").write_text(
        "import contextlib, io, json\n\n"
        "def test_offline():\n"
        "    out = io.StringIO()\n"
        "    with contextlib.redirect_stdout(out):\n"
        f"        exec({code!r}, {{}})\n"
        "    probe = json.loads(out.getvalue())\n"
        "    assert probe == {'reached': False, 'interfaces': ['lo'], 'ifs': ['lo']}\n"
    )
    env = run_test(ws, sandbox, "tests/test_net.py", timeout=60)
    assert env["ok"] and env["data"]["passed"], env["data"]["output"]


def test_execute_cannot_read_the_host(sandbox: Sandbox):
    assert (CHECKOUT / "pyproject.toml").is_file()  # the file is there on the host
    code = f"""
import json, os
def read(path):
    try:
        return open(path, "rb").read()[:20].decode("latin-1")
    except OSError as exc:
        return type(exc).__name__
def ls(path):
    try:
        return sorted(os.listdir(path))
    except OSError as exc:
        return type(exc).__name__
print(json.dumps({{
    "pyproject": read({str(CHECKOUT / "pyproject.toml")!r}),
    "checkout": ls({str(CHECKOUT)!r}),
    "shadow": read("/etc/shadow"),
    "root": ls("/root"),
    "etc": ls("/etc"),
}}))
"""
    seen = json.loads(execute(sandbox, code, timeout=10)["data"]["stdout"])
    assert seen["pyproject"] == "FileNotFoundError" and seen["shadow"] == "FileNotFoundError"
    # Only the interpreter's own prefixes show through, e.g. .venv inside the checkout.
    assert seen["checkout"] == _visible_children(CHECKOUT)
    assert seen["root"] == _visible_children(Path("/root"))
    assert "shadow" not in seen["etc"] and len(seen["etc"]) < len(os.listdir("/etc"))


def test_run_test_cannot_read_the_host(sandbox: Sandbox, ws: Path):
    (ws.parent / "outside.txt").write_text("next to the workspace")
    candidates = [CHECKOUT / "pyproject.toml", ws.parent / "outside.txt", Path("/etc/shadow")]
    candidates += [p for p in Path("/root").glob(".*") if p.is_file()][:3]
    paths = [str(p) for p in candidates if p.exists()]  # exists on the host, never read here
    (ws / "tests" / "test_peek.py").write_text(
        "import pytest\n\n"
        f"@pytest.mark.parametrize('path', {paths!r})\n"
        "def test_unreadable(path):\n"
        "    with pytest.raises(FileNotFoundError):\n"
        "        open(path).read()\n"
    )
    env = run_test(ws, sandbox, "tests/test_peek.py", timeout=60)
    assert env["ok"] and env["data"]["passed"], env["data"]["output"]
    assert f"{len(paths)} passed" in env["data"]["output"]


def test_harness_secrets_are_invisible(sandbox: Sandbox, ws: Path, monkeypatch: pytest.MonkeyPatch):
    secret = f"sk-{uuid.uuid4().hex}"
    for name in SECRETS:
        monkeypatch.setenv(name, secret)
    code = "import os\nprint(dict(os.environ))\nfor p in ('/proc/self/environ', '/proc/1/environ'):\n    print(open(p, 'rb').read())\n"
    data = execute(sandbox, code, timeout=10)["data"]
    assert data["exit_code"] == 0 and "PATH" in data["stdout"]
    assert secret not in data["stdout"] and not any(name in data["stdout"] for name in SECRETS)
    shell = run_test(ws, sandbox, "env", timeout=10)["data"]
    assert shell["passed"] and "PATH=" in shell["output"] and secret not in shell["output"]


def test_host_processes_are_invisible(sandbox: Sandbox):
    marker = f"7200.{uuid.uuid4().int % 10**9:09d}"
    host = subprocess.Popen(["sleep", marker])
    try:
        code = f"""
import glob
seen = [open(p, "rb").read() for p in glob.glob("/proc/[0-9]*/cmdline")]
print(len(seen), any(b"{marker}" in c for c in seen))
"""
        count, found = execute(sandbox, code, timeout=10)["data"]["stdout"].split()
    finally:
        host.kill()
        host.wait()
    assert found == "False" and int(count) < 10


def test_execute_cannot_outlive_its_timeout(sandbox: Sandbox):
    marker = f"3600.{uuid.uuid4().int % 10**9:09d}"
    data = execute(sandbox, daemonizer_code(marker), timeout=2)["data"]
    assert data["stdout"] == "all started\n" and data["timed_out"]
    assert processes_with(marker) == []


def test_run_test_cannot_outlive_its_timeout(sandbox: Sandbox, ws: Path):
    marker = f"3600.{uuid.uuid4().int % 10**9:09d}"
    (ws / "hang.py").write_text(daemonizer_code(marker))
    data = run_test(ws, sandbox, "python hang.py", timeout=2)["data"]
    assert data["output"] == "all started\n" and data["timed_out"] and not data["passed"]
    assert processes_with(marker) == []


def test_fork_bomb_is_bounded_by_the_pids_limit(sandbox: Sandbox):
    if not probe_cgroups().pids_limited:
        pytest.skip("no pids cgroup here, and RLIMIT_NPROC does not bind root")
    counter = """
import os, time
n = 0
try:
    while True:
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
        n += 1
except OSError as exc:
    print(n, exc.errno)
"""
    forked, errno = execute(sandbox, counter, timeout=10)["data"]["stdout"].split()
    assert 0 < int(forked) < sandbox.limits.pids and int(errno) == 11  # EAGAIN
    marker = f"bomb-{uuid.uuid4().hex}"
    bomb = (
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    )
    relaunch = (
        f"import os, sys\nos.execv(sys.executable, [sys.executable, '-c', {bomb!r}, {marker!r}])"
    )
    data = execute(sandbox, relaunch, timeout=2)["data"]
    assert data["timed_out"]
    assert processes_with(marker) == []
    assert subprocess.run(["true"]).returncode == 0  # the harness can still start processes


def test_allocating_the_machine_fails_inside_only(sandbox: Sandbox):
    data = execute(sandbox, "x = bytearray(8 << 30)\nprint('allocated')", timeout=10)["data"]
    assert "allocated" not in data["stdout"]
    assert "MemoryError" in data["stderr"] or data["exit_code"] == 137


def test_memory_cgroup_kills_what_rlimit_as_lets_through(sandbox: Sandbox):
    if not probe_cgroups().memory_limited:
        pytest.skip("no memory cgroup here; only RLIMIT_AS bounds memory")
    small = Sandbox("bwrap", bwrap=sandbox.bwrap, limits=SandboxLimits(memory_bytes=256 << 20))
    code = (
        "chunks = []\nfor i in range(32):\n    chunks.append(bytearray(32 << 20))\nprint('1 GiB')"
    )
    data = execute(small, code, timeout=20)["data"]
    assert data["exit_code"] == 137 and "1 GiB" not in data["stdout"]


def test_writes_outside_the_workspace_leave_nothing_behind(sandbox: Sandbox, ws: Path):
    name = f"toolpolicy-leak-{uuid.uuid4().hex}"
    code = f"""
import errno, os
open("/tmp/{name}", "w").write("x")
open(os.path.expanduser("~/{name}"), "w").write("x")
for path in ("/usr/{name}", "/etc/{name}", {str(CHECKOUT / name)!r}):
    try:
        open(path, "w").write("x")
        print("wrote", path)
    except OSError as exc:
        print(errno.errorcode[exc.errno])
"""
    data = execute(sandbox, code, timeout=10)["data"]
    assert data["exit_code"] == 0, data["stderr"]
    usr, etc, checkout = data["stdout"].splitlines()
    assert (usr, etc) == ("EROFS", "EROFS")
    # A checkout under the host's /tmp shows up as an empty mount point on the private /tmp:
    # writable there, but nothing reaches the host (checked below).
    assert checkout in ("EROFS", "ENOENT") or str(CHECKOUT).startswith("/tmp/")
    leaks = [Path("/tmp", name), Path("/usr", name), Path("/etc", name), CHECKOUT / name]
    assert [p for p in leaks if p.exists()] == []
    shell = run_test(ws, sandbox, f"touch made.txt && touch /usr/{name}", timeout=10)["data"]
    assert not shell["passed"] and "Read-only file system" in shell["output"]
    assert (ws / "made.txt").exists() and not Path("/usr", name).exists()


def test_the_workspace_git_directory_is_read_only(sandbox: Sandbox, ws: Path):
    (ws / ".git" / "refs").mkdir(parents=True)
    (ws / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    target = "echo edited > notes.txt && echo evil > .git/HEAD"
    data = run_test(ws, sandbox, target, timeout=10)["data"]
    assert not data["passed"] and "Read-only file system" in data["output"]
    assert (ws / "notes.txt").read_text() == "edited\n"
    assert (ws / ".git" / "HEAD").read_text() == "ref: refs/heads/main\n"


def test_degraded_mode_still_scrubs_and_kills(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TOOLPOLICY_SANDBOX", "degraded")
    secret = f"sk-{uuid.uuid4().hex}"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    degraded = Sandbox.from_env()
    data = execute(degraded, "import os; print(sorted(os.environ))", timeout=10)["data"]
    assert data["sandbox"] == "degraded" and "OPENAI_API_KEY" not in data["stdout"]
    marker = f"3600.{uuid.uuid4().int % 10**9:09d}"
    code = f"import subprocess\nsubprocess.Popen(['sh', '-c', 'sleep {marker}; true'])\nwhile True: pass"
    data = execute(degraded, code, timeout=2)["data"]
    assert data["timed_out"] and data["sandbox"] == "degraded"
    assert processes_with(marker) == []


def _visible_children(directory: Path) -> list[str] | str:
    """What a listing of ``directory`` shows inside the sandbox: the mount points of the
    interpreter's prefixes below it, or no directory at all."""
    below = [Path(p) for p in python_prefixes(sys.executable) if Path(p).is_relative_to(directory)]
    children = sorted({p.relative_to(directory).parts[0] for p in below if p != directory})
    return children or "FileNotFoundError"
