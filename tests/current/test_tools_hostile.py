"""The baseline's file tools over a workspace an attacker rigged: links to host files and
directories, FIFOs, huge files, ``.git`` metadata, harness faults. Each test checks that the host
is unchanged and that nothing of the host reached the envelope."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from pytest_toolpolicy.current.tools import call_tool
from pytest_toolpolicy.primitives import Toolbox, safefs
from pytest_toolpolicy.primitives.envelope import Envelope, HarnessFault
from pytest_toolpolicy.primitives.sandbox import Sandbox, SandboxUnavailable

STORE = "memstore/store.py"
SECRET = "HOST SECRET: do not leak\n"
TOOLS = ("read_file", "write_file", "edit_file")


@pytest.fixture
def host(tmp_path: Path) -> Path:
    """A directory outside the workspace standing in for the host, holding one secret file."""
    root = tmp_path / "host"
    root.mkdir()
    (root / "secret.txt").write_text(SECRET)
    return root


def args_for(tool: str, path: str) -> dict[str, Any]:
    return {
        "read_file": {"path": path},
        "write_file": {"path": path, "content": "pwned\n"},
        "edit_file": {"path": path, "old": "HOST", "new": "pwned"},
    }[tool]


def assert_refused(env: Envelope, *words: str) -> None:
    assert env["ok"] is False, env
    for word in words:
        assert word in env["error"], env
    assert "SECRET" not in json.dumps(env)


@pytest.mark.parametrize("tool", TOOLS)
def test_a_link_to_a_host_file_is_refused_and_the_host_file_unchanged(
    box: Toolbox, host: Path, tool: str
) -> None:
    (box.root / "evil.py").symlink_to(host / "secret.txt")
    assert_refused(call_tool(box, tool, args_for(tool, "evil.py")), "symbolic link")
    assert (host / "secret.txt").read_text() == SECRET
    assert (box.root / "evil.py").is_symlink()  # not replaced either: the call did nothing


@pytest.mark.parametrize("tool", TOOLS)
def test_a_link_to_a_host_directory_on_the_way_is_refused(
    box: Toolbox, host: Path, tool: str
) -> None:
    (box.root / "vendor").symlink_to(host, target_is_directory=True)
    for path in ("vendor/secret.txt", "vendor/new.py", "vendor/deeper/new.py"):
        assert_refused(call_tool(box, tool, args_for(tool, path)), "symbolic link")
    assert sorted(p.name for p in host.iterdir()) == ["secret.txt"]
    assert (host / "secret.txt").read_text() == SECRET


@pytest.mark.parametrize("tool", TOOLS)
def test_a_link_that_stays_inside_is_refused_too(box: Toolbox, tool: str) -> None:
    before = (box.root / STORE).read_bytes()
    (box.root / "alias.py").symlink_to(box.root / STORE)
    (box.root / "pkgalias").symlink_to(box.root / "memstore", target_is_directory=True)
    assert_refused(call_tool(box, tool, args_for(tool, "alias.py")), "symbolic link")
    assert_refused(call_tool(box, tool, args_for(tool, "pkgalias/store.py")), "symbolic link")
    assert (box.root / STORE).read_bytes() == before


def test_a_link_the_sandbox_made_is_not_written_through(box: Toolbox, host: Path) -> None:
    """The real attack: a sandboxed command plants the link, the host-side tool follows it."""
    try:
        sandbox = Sandbox.select("require")
    except SandboxUnavailable as exc:
        pytest.skip(f"needs bubblewrap: {exc}")
    box = Toolbox(box.root, sandbox=sandbox, workspace=box.workspace)
    planted = call_tool(box, "bash", {"command": f"ln -s {host / 'secret.txt'} evil.py"})
    assert planted["ok"] and planted["data"]["exit_code"] == 0, planted
    for tool in TOOLS:
        assert_refused(call_tool(box, tool, args_for(tool, "evil.py")), "symbolic link")
    assert (host / "secret.txt").read_text() == SECRET


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize(
    "path", [".git/config", ".git/hooks/pre-commit", "sub/.git/hooks/pre-commit", ".GIT/config"]
)
def test_git_metadata_is_never_touched(box: Toolbox, tool: str, path: str) -> None:
    (box.root / "sub/.git/hooks").mkdir(parents=True)  # a nested repository the model made
    (box.root / "sub/.git/hooks/pre-commit").write_text("HOST hook\n")
    with (box.root / ".git/config").open("a") as config_file:
        config_file.write("# HOST marker, so an edit_file would have something to replace\n")
    config = (box.root / ".git/config").read_bytes()
    assert_refused(call_tool(box, tool, args_for(tool, path)), "repository's metadata")
    assert (box.root / ".git/config").read_bytes() == config
    assert not (box.root / ".git/hooks/pre-commit").exists()
    assert (box.root / "sub/.git/hooks/pre-commit").read_text() == "HOST hook\n"


def test_a_fifo_is_never_opened_for_reading_or_writing(box: Toolbox) -> None:
    fifo = box.root / "pipe.py"
    os.mkfifo(fifo)
    results: dict[str, Envelope] = {}

    def attempt() -> None:
        for tool in TOOLS:
            results[tool] = call_tool(box, tool, args_for(tool, "pipe.py"))

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(timeout=10)
    stalled = worker.is_alive()
    if stalled:  # release a reader blocked in open() so the worker can end
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert not stalled, "a tool blocked on the FIFO"
    for tool in TOOLS:
        assert_refused(results[tool], "not a regular file")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # write_file did not replace it either


def test_a_file_over_the_read_limit_is_a_specific_error(
    box: Toolbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLPOLICY_LIMITS", "read_mb=0.001")  # 1048 bytes
    (box.root / "big.py").write_text("x = 1\n" * 1000)
    for tool in ("read_file", "edit_file"):
        assert_refused(call_tool(box, tool, args_for(tool, "big.py")), "6000 bytes", "read limit")
    assert call_tool(box, "read_file", {"path": STORE})["ok"]  # small files still read


def test_edit_and_overwrite_keep_the_mode_and_non_utf8_bytes(box: Toolbox) -> None:
    script = box.root / "run.sh"
    script.write_bytes(b"#!/bin/sh\n# caf\xe9\necho old\n")
    script.chmod(0o755)
    env = call_tool(box, "edit_file", {"path": "run.sh", "old": "echo old", "new": "echo new"})
    assert env["ok"], env
    assert script.read_bytes() == b"#!/bin/sh\n# caf\xe9\necho new\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o755
    assert call_tool(box, "write_file", {"path": "run.sh", "content": "echo x\n"})["ok"]
    assert stat.S_IMODE(script.stat().st_mode) == 0o755
    assert call_tool(box, "write_file", {"path": "new.py", "content": "x = 1\n"})["ok"]
    assert stat.S_IMODE((box.root / "new.py").stat().st_mode) == 0o644


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ({"path": f"{STORE}/under_a_file.py", "content": "x"}, "ot a directory"),
        ({"path": "a\x00b.py", "content": "x"}, "NUL"),
        ({"path": "x" * 5000, "content": "x"}, "File name too long"),
        ({"path": "lone.py", "content": "\ud800"}, "not valid text"),
        ({"path": ".", "content": "x"}, "workspace root"),
    ],
)
def test_odd_paths_and_content_are_input_errors_not_faults(
    box: Toolbox, args: dict[str, Any], error: str
) -> None:
    assert_refused(call_tool(box, "write_file", args), error)


def test_a_harness_exception_inside_a_tool_is_a_harness_fault(
    box: Toolbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> bytes:
        raise TypeError("a harness bug, not the model's arguments")

    monkeypatch.setattr(safefs, "read_bytes", broken)
    with pytest.raises(HarnessFault, match="read_file failed: TypeError: a harness bug"):
        call_tool(box, "read_file", {"path": STORE})
    # The model's own bad arguments are still an envelope.
    assert "invalid args" in call_tool(box, "read_file", {"file": STORE})["error"]


def test_a_sandbox_or_index_failure_in_bash_is_a_harness_fault(
    box: Toolbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(box.index, "refresh", broken)
    with pytest.raises(HarnessFault, match="bash failed: OSError: .*Input/output error"):
        call_tool(box, "bash", {"command": "true"})
    monkeypatch.setattr(type(box.sandbox), "run", broken)
    with pytest.raises(HarnessFault, match="bash failed: OSError"):
        call_tool(box, "bash", {"command": "true"})


def test_bash_refreshes_the_index_after_changing_files(box: Toolbox) -> None:
    assert box.index.get("memstore.store.added") is None
    command = f"printf '\\n\\ndef added():\\n    return 1\\n' >> {STORE}"
    assert call_tool(box, "bash", {"command": command})["ok"]
    assert box.index.get("memstore.store.added") is not None


def test_a_full_host_disk_is_a_harness_fault_not_an_observation(
    box: Toolbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(*args: Any, **kwargs: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(safefs, "write_bytes", full)
    with pytest.raises(HarnessFault, match="No space left"):
        call_tool(box, "write_file", {"path": "new.txt", "content": "x"})


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("read_file", {"path": "a\ud800.py"}),
        ("write_file", {"path": "x.txt", "content": "\udcff"}),
        ("bash", {"command": "echo \ud800"}),
    ],
)
def test_a_lone_surrogate_in_the_args_is_bad_input(
    box: Toolbox, tool: str, args: dict[str, Any]
) -> None:
    env = call_tool(box, tool, args)
    assert not env["ok"] and "lone surrogate" in env["error"]
