"""The sandbox itself: mode selection, the result it reports, bounded output, the tree kill."""

from __future__ import annotations

import json
import os
import sys
import uuid
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_toolpolicy.primitives import cgroups
from pytest_toolpolicy.primitives.capture import CappedBuffer
from pytest_toolpolicy.primitives.cgroups import CGROUP_ROOT
from pytest_toolpolicy.primitives.sandbox import (
    RunResult,
    Sandbox,
    SandboxLimits,
    SandboxUnavailable,
)

from .proc_helpers import daemonizer_code, probe_cgroups, processes_with

ALLOWED_ENV = {
    "PATH", "LANG", "LC_ALL", "HOME", "TMPDIR", "TERM", "NO_COLOR", "PWD",
    "PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED", "PYTHONUNBUFFERED", "PYTHONNOUSERSITE",
}  # fmt: skip
PRINT_ENV = "import os, json; print(json.dumps(dict(os.environ)))"


def run_py(sandbox: Sandbox, code: str, timeout: float = 5, **kwargs) -> RunResult:
    args = {"cwd": None, "writable": None, "stdin": None, "merge_stderr": False, **kwargs}
    return sandbox.run([sys.executable, "-c", code], timeout=timeout, **args)


@pytest.fixture(scope="module")
def bwrap() -> Sandbox:
    try:
        return Sandbox.select("require")
    except SandboxUnavailable as exc:
        pytest.skip(f"bubblewrap cannot run here: {exc}")


@pytest.fixture(params=["bwrap", "degraded"])
def sandbox(request: pytest.FixtureRequest) -> Sandbox:
    if request.param == "degraded":
        return Sandbox.select("degraded")
    return request.getfixturevalue("bwrap")


def test_require_without_bwrap_refuses_with_the_reason(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TOOLPOLICY_SANDBOX", "require")
    monkeypatch.setenv("TOOLPOLICY_BWRAP", "/nonexistent/bwrap")
    with pytest.raises(SandboxUnavailable, match="bwrap not found at /nonexistent/bwrap"):
        Sandbox.from_env()


def test_auto_without_bwrap_degrades_and_says_why(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("TOOLPOLICY_SANDBOX", raising=False)
    monkeypatch.setenv("TOOLPOLICY_BWRAP", "/nonexistent/bwrap")
    sandbox = Sandbox.from_env()
    assert sandbox.mode == "degraded"
    result = run_py(sandbox, "print('hi')")
    assert (result.stdout, result.exit_code, result.sandbox) == (b"hi\n", 0, "degraded")
    assert "degraded sandbox: bwrap not found at /nonexistent/bwrap" in result.notes


def test_forced_degraded_and_a_bad_policy(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TOOLPOLICY_SANDBOX", "degraded")
    assert Sandbox.from_env().mode == "degraded"
    with pytest.raises(ValueError, match="auto, require or degraded, got 'yes'"):
        Sandbox.from_env({"TOOLPOLICY_SANDBOX": "yes"})


def test_auto_picks_bwrap_where_it_runs(bwrap: Sandbox):
    assert Sandbox.from_env({}).mode == "bwrap"


def test_result_carries_streams_exit_code_and_stdin(sandbox: Sandbox):
    code = "import sys; data = sys.stdin.read(); print(data.upper()); print('e', file=sys.stderr)"
    result = run_py(sandbox, code, stdin=b"abc", timeout=10)
    assert (result.stdout, result.stderr, result.exit_code) == (b"ABC\n", b"e\n", 0)
    assert (result.timed_out, result.stdout_dropped, result.stderr_dropped) == (False, 0, 0)
    assert result.sandbox == sandbox.mode
    assert run_py(sandbox, "raise SystemExit(7)").exit_code == 7
    assert run_py(sandbox, "import os; os.kill(os.getpid(), 9)").exit_code == 128 + 9


def test_environment_is_the_allow_list_only(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch):
    secret = uuid.uuid4().hex
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    monkeypatch.setenv("TOOLPOLICY_TEST_SECRET", secret)
    result = run_py(sandbox, PRINT_ENV)
    assert secret.encode() not in result.stdout
    assert set(json.loads(result.stdout)) <= ALLOWED_ENV


def test_a_flood_of_output_is_capped_and_counted(sandbox: Sandbox):
    code = (
        "import sys; sys.stdout.buffer.write(b'x' * 100_000_000); sys.stdout.flush(); print('end')"
    )
    result = run_py(sandbox, code, timeout=30)
    cap = sandbox.limits.output_bytes
    assert result.exit_code == 0 and not result.timed_out
    assert len(result.stdout) <= cap
    marker = f"\n[... {result.stdout_dropped} bytes dropped ...]\n".encode()
    assert marker in result.stdout
    assert len(result.stdout) - len(marker) + result.stdout_dropped == 100_000_004
    assert result.stdout.endswith(b"xxend\n")  # the tail is kept: a verdict is printed last


def test_non_utf8_output_is_passed_through_as_bytes(sandbox: Sandbox):
    result = run_py(sandbox, "import sys; sys.stdout.buffer.write(b'\\xff\\xfe\\xc3(')")
    assert result.stdout == b"\xff\xfe\xc3("


def test_merged_stderr_comes_in_order(sandbox: Sandbox):
    code = "import sys; print('a'); print('b', file=sys.stderr); print('c')"
    result = run_py(sandbox, code, merge_stderr=True)
    assert (result.stdout, result.stderr) == (b"a\nb\nc\n", b"")


def test_timeout_kills_the_whole_tree(sandbox: Sandbox):
    marker = f"3600.{uuid.uuid4().int % 10**9:09d}"  # a unique `sleep` duration in every cmdline
    code = daemonizer_code(marker)
    if sandbox.mode == "degraded" and not probe_cgroups().pids_limited:
        pytest.skip("degraded mode reaches a setsid daemon only through a pids cgroup")
    result = run_py(sandbox, code, timeout=2)
    assert result.stdout == b"all started\n"
    assert result.timed_out and result.exit_code == 137
    assert "timed out after 2s; process tree killed" in result.notes
    assert processes_with(marker) == []


def test_a_process_that_closes_its_output_still_runs_to_its_end_or_its_timeout(sandbox: Sandbox):
    # Its pipes reach EOF long before it exits: neither a kill then nor an endless wait.
    quiet = "import os, time; os.close(1); os.close(2); time.sleep({}); raise SystemExit(3)"
    result = run_py(sandbox, quiet.format(0.5))
    assert (result.exit_code, result.timed_out) == (3, False)
    result = run_py(sandbox, quiet.format(30), timeout=1)
    assert (result.exit_code, result.timed_out) == (137, True)
    assert result.duration_s < 10


def test_run_cgroups_are_removed_afterwards(sandbox: Sandbox):
    run_py(sandbox, "print(1)")
    assert _cgroups_named(f"toolpolicy-{os.getpid()}-") == []


def _cgroups_named(prefix: str) -> list[str]:
    """Cgroup directories under CGROUP_ROOT whose name starts with ``prefix``. A walk that
    shrugs off directories removed under it: other processes (another xdist worker's sandbox
    runs) create and remove their cgroups meanwhile, which made Path.glob raise
    FileNotFoundError."""
    return [
        os.path.join(top, name)
        for top, dirs, _ in os.walk(CGROUP_ROOT, onerror=lambda error: None)
        for name in dirs
        if name.startswith(prefix) and top != str(CGROUP_ROOT)
    ]


def test_without_cgroups_the_run_says_what_is_missing_and_still_kills_the_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(cgroups, "CGROUP_ROOT", tmp_path)  # a host without writable cgroups
    marker = f"3600.{uuid.uuid4().int % 10**9:09d}"
    code = f"import subprocess\nsubprocess.Popen(['sh', '-c', 'sleep {marker}; true'])\nwhile True: pass"
    result = run_py(Sandbox.select("degraded"), code, timeout=2)
    assert result.timed_out and processes_with(marker) == []
    assert "no process limit applies (RLIMIT_NPROC does not bind root)" in result.notes
    assert "memory bounded only by RLIMIT_AS" in result.notes
    assert "descendants that left the process group (setsid) may survive" in result.notes


def test_a_cgroup_v2_hierarchy_without_controllers_still_sweeps_daemons(
    monkeypatch: pytest.MonkeyPatch,
):
    unified = CGROUP_ROOT / "unified"  # the v2 half of a hybrid host, as a v2-only host's root
    if not (unified / "cgroup.controllers").exists() or not os.access(unified, os.W_OK):
        pytest.skip("no writable cgroup v2 hierarchy at /sys/fs/cgroup/unified")
    monkeypatch.setattr(cgroups, "CGROUP_ROOT", unified)
    marker = f"3600.{uuid.uuid4().int % 10**9:09d}"
    code = f"""
import os
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv("/bin/sleep", ["sleep", "{marker}"])
    os._exit(0)
"""
    result = run_py(Sandbox.select("degraded"), code)
    assert result.exit_code == 0 and processes_with(marker) == []
    assert "descendants that left the process group (setsid) may survive" not in result.notes
    assert list(unified.glob(f"toolpolicy-{os.getpid()}-*")) == []


def test_writable_dir_is_cwd_and_the_only_writable_host_path(bwrap: Sandbox, tmp_path: Path):
    work = tmp_path / "work"
    work.mkdir()
    code = "import os; open('made.txt', 'w').write(os.getcwd())"
    result = run_py(bwrap, code, cwd=work, writable=work)
    assert result.exit_code == 0, result.stderr
    assert (work / "made.txt").read_text() == str(work)
    with pytest.raises(ValueError, match="not inside the writable directory"):
        run_py(bwrap, "pass", cwd=tmp_path, writable=work)


def test_limits_are_configurable(bwrap: Sandbox):
    small = Sandbox("bwrap", bwrap=bwrap.bwrap, limits=SandboxLimits(output_bytes=1000))
    result = run_py(small, "print('y' * 5000)")
    assert len(result.stdout) <= 1000 and result.stdout_dropped > 0
    assert b"bytes dropped ...]" in result.stdout


@given(
    cap=st.integers(0, 300),
    tail=st.integers(0, 300),
    chunks=st.lists(st.binary(max_size=120), max_size=12),
)
def test_capped_buffer_keeps_head_and_tail_within_the_cap(cap: int, tail: int, chunks: list[bytes]):
    tail = min(tail, cap)
    buf = CappedBuffer(cap, tail)
    for chunk in chunks:
        buf.feed(chunk)
    data = b"".join(chunks)
    value = buf.getvalue()
    assert len(value) <= cap and buf.total == len(data)
    kept = len(data) - buf.dropped
    marker = f"\n[... {buf.dropped} bytes dropped ...]\n".encode() if buf.dropped else b""
    # the value is a prefix and a suffix of the stream, with the marker between them if it fits
    assert any(
        value
        in (
            data[:h] + marker + data[len(data) - kept + h :],
            data[:h] + data[len(data) - kept + h :],
        )
        for h in range(kept + 1)
    )


def test_the_side_channel_reaches_the_host_and_nowhere_else(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    """What the run writes to its channel descriptor comes back apart from its output, cut at
    the cap (counted), and no file of the run's holds it."""
    code = (
        "import os\n"
        "fd = int(os.environ['TOOLPOLICY_CHANNEL_FD'])\n"
        "os.write(fd, b'record 1\\n' + b'x' * 100)\n"
        "print('output')\n"
    )
    result = sandbox.run(
        [sys.executable, "-c", code], cwd=tmp_path, writable=tmp_path, stdin=None,
        timeout=10, merge_stderr=True, channel=50,
    )  # fmt: skip
    assert result.exit_code == 0, result
    assert result.stdout == b"output\n"
    assert result.channel is not None and result.channel.startswith(b"record 1\n")
    assert len(result.channel) <= 50 and result.channel_dropped > 0
    assert os.listdir(tmp_path) == []
    plain = run_py(sandbox, "import os; print('TOOLPOLICY_CHANNEL_FD' in os.environ)")
    assert plain.stdout == b"False\n" and plain.channel is None
