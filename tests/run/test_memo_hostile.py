"""The execution memo over workspaces a sandboxed run rigged: links to host files and
directories, FIFOs, huge files. Real bubblewrap runs, real replays; each test checks that no host
content reached the memo and that no replay wrote through a link."""

from __future__ import annotations

import base64
import os
import sqlite3
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_toolpolicy.current.tools import call_tool
from pytest_toolpolicy.primitives import Toolbox, Workspace, safefs
from pytest_toolpolicy.primitives.envelope import Envelope, HarnessFault
from pytest_toolpolicy.primitives.sandbox import Sandbox
from pytest_toolpolicy.run import memo as memo_module
from pytest_toolpolicy.run.memo import ExecutionMemo, MemoDispatch

from .test_memo import EDIT, FILES

SECRET = "HOST SECRET: do not leak\n"
REWRITE = "rm pkg/mod.py && printf 'def double(x):\\n    return x * 5\\n' > pkg/mod.py"


@pytest.fixture(scope="module")
def sandbox(bwrap_sandbox: Sandbox) -> Sandbox:
    return bwrap_sandbox


@pytest.fixture
def host(tmp_path: Path) -> Path:
    """A directory outside every workspace standing in for the host."""
    root = tmp_path / "host"
    root.mkdir()
    (root / "secret.txt").write_text(SECRET)
    (root / "mod.py").write_text(SECRET)  # what a link to this directory would show as pkg/mod.py
    return root


@pytest.fixture
def make_box(tmp_path: Path, sandbox: Sandbox) -> Callable[..., Toolbox]:
    def make(name: str, extra: dict[str, str] | None = None) -> Toolbox:
        root = tmp_path / name
        for rel, text in {**FILES, **(extra or {})}.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
        env = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
        return Toolbox(root, sandbox=sandbox, workspace=Workspace.create(root), sandbox_env=env)

    return make


@pytest.fixture
def memo(tmp_path: Path) -> ExecutionMemo:
    store = ExecutionMemo(tmp_path / "memo.sqlite")
    yield store
    store.close()


class Run:
    """A memoized dispatch over one toolbox (the baseline's tools, or the policy's), recording
    the calls that really ran."""

    def __init__(self, memo: ExecutionMemo, box: Toolbox, arm: str = "current") -> None:
        self.box = box
        self.ran: list[str] = []
        inner = box.call if arm == "policy" else (lambda t, a: call_tool(box, t, a))

        def counted(tool: str, args: dict[str, Any]) -> Envelope:
            self.ran.append(tool)
            return inner(tool, args)

        self.dispatch = MemoDispatch(memo, counted, box, f"{arm}:bwrap")

    def bash(self, command: str) -> Envelope:
        env = self.dispatch("bash", {"command": command})
        assert env["ok"] and env["data"]["exit_code"] == 0, env
        return env


def stored_bytes(tmp_path: Path) -> bytes:
    """Everything the memo's SQLite files hold, as raw bytes (the WAL included)."""
    return b"".join(p.read_bytes() for p in sorted(tmp_path.glob("memo.sqlite*")))


def entries(tmp_path: Path) -> list[dict[str, Any]]:
    import json

    with sqlite3.connect(tmp_path / "memo.sqlite") as db:
        return [json.loads(raw) for (raw,) in db.execute("SELECT value FROM memo")]


def assert_no_host_content(tmp_path: Path) -> None:
    raw = stored_bytes(tmp_path)
    assert SECRET.strip().encode() not in raw
    assert base64.b64encode(SECRET.encode())[:16] not in raw


def tree(box: Toolbox) -> str:
    assert box.workspace is not None
    return box.workspace.tree_hash()


def test_a_run_test_that_links_a_file_to_the_host_stores_the_link_never_the_host_file(
    make_box: Callable[..., Toolbox], memo: ExecutionMemo, host: Path, tmp_path: Path
) -> None:
    plant = (
        "import os\nfrom pathlib import Path\n\n\ndef test_plant():\n"
        "    mod = Path(__file__).parents[1] / 'pkg' / 'mod.py'\n"
        f"    mod.unlink()\n    os.symlink({str(host / 'secret.txt')!r}, mod)\n"
    )
    extra = {"tests/test_plant.py": plant}
    original, replica = make_box("a", extra), make_box("b", extra)
    args = {"target": "tests/test_plant.py", "timeout": 60}
    first = Run(memo, original, "policy")
    assert first.dispatch("run_test", args)["data"]["passed"]
    assert (original.root / "pkg/mod.py").is_symlink()  # the attack happened
    assert_no_host_content(tmp_path)
    [entry] = entries(tmp_path)
    assert entry["files"] == {"pkg/mod.py": {"link": str(host / "secret.txt")}}

    second = Run(memo, replica, "policy")
    assert second.dispatch("run_test", args)["data"]["passed"]
    assert second.ran == []  # served by the memo
    assert os.readlink(replica.root / "pkg/mod.py") == str(host / "secret.txt")
    assert tree(replica) == tree(original)
    assert (host / "secret.txt").read_text() == SECRET


def test_a_replay_onto_a_link_the_sandbox_left_replaces_the_link_not_the_host_file(
    make_box: Callable[..., Toolbox], memo: ExecutionMemo, host: Path, tmp_path: Path
) -> None:
    target = host / "secret.txt"
    original = Run(memo, make_box("a"))
    original.bash(f"ln -sf {target} pkg/mod.py")
    original.bash(REWRITE)

    replica = Run(memo, make_box("b"))
    replica.bash(f"rm pkg/mod.py; ln -s {target} pkg/mod.py")  # another command: really run
    assert (replica.box.root / "pkg/mod.py").is_symlink()
    replica.bash(REWRITE)  # a hit: its recorded effect is written back over the link
    assert replica.ran == ["bash"]  # the rewrite was served, not run
    assert target.read_text() == SECRET
    mod = replica.box.root / "pkg/mod.py"
    assert not mod.is_symlink() and "x * 5" in mod.read_text()
    assert tree(replica.box) == tree(original.box)
    assert replica.box.index.get("pkg.mod.double") is not None  # the index saw the replay
    assert_no_host_content(tmp_path)


def test_a_directory_linked_to_the_host_is_not_memoized(
    make_box: Callable[..., Toolbox], memo: ExecutionMemo, host: Path, tmp_path: Path
) -> None:
    command = f"rm -rf pkg && ln -s {host} pkg"
    original = Run(memo, make_box("a"))
    original.bash(command)
    assert (original.box.root / "pkg").is_symlink()
    assert entries(tmp_path) == []
    assert_no_host_content(tmp_path)
    replica = Run(memo, make_box("b"))
    replica.bash(command)
    assert replica.ran == ["bash"]  # nothing to serve: it ran again
    assert sorted(p.name for p in host.iterdir()) == ["mod.py", "secret.txt"]


def test_a_fifo_left_at_a_changed_path_does_not_stall_the_memo(
    make_box: Callable[..., Toolbox], memo: ExecutionMemo, tmp_path: Path
) -> None:
    box = make_box("a")
    run = Run(memo, box)
    outcome: list[Any] = []
    worker = threading.Thread(
        target=lambda: outcome.append(run.bash("rm pkg/mod.py && mkfifo pkg/mod.py")),
        daemon=True,
    )
    worker.start()
    worker.join(timeout=60)
    stalled = worker.is_alive()
    if stalled:  # release a reader blocked in open() so the worker can end
        os.close(os.open(box.root / "pkg/mod.py", os.O_WRONLY | os.O_NONBLOCK))
    assert not stalled, "capturing the change blocked on the FIFO"
    assert outcome and stat.S_ISFIFO(os.lstat(box.root / "pkg/mod.py").st_mode)
    assert entries(tmp_path) == []  # a change that is not a file or a link is not memoized


def test_a_change_over_the_read_limit_is_not_memoized(
    make_box: Callable[..., Toolbox],
    memo: ExecutionMemo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TOOLPOLICY_LIMITS", "read_mb=0.001")  # 1048 bytes
    run = Run(memo, make_box("a"))
    run.bash("head -c 5000 /dev/zero > big.txt")  # one file over the limit
    run.bash("head -c 800 /dev/zero > a.txt && head -c 800 /dev/zero > b.txt")  # two, together
    assert entries(tmp_path) == []
    run.bash("head -c 800 /dev/zero > c.txt")  # under it: stored
    assert len(entries(tmp_path)) == 1


def test_binary_files_modes_and_links_in_new_directories_replay_exactly(
    make_box: Callable[..., Toolbox], memo: ExecutionMemo, host: Path, tmp_path: Path
) -> None:
    command = (
        "printf '\\377\\000\\001' > pkg/data.bin && chmod +x pkg/mod.py"
        f" && mkdir -p deep/er && ln -s {host / 'secret.txt'} deep/er/x.py"
    )
    original, replica = Run(memo, make_box("a")), Run(memo, make_box("b"))
    original.bash(command)
    replica.bash(command)
    assert replica.ran == []
    root = replica.box.root
    assert (root / "pkg/data.bin").read_bytes() == b"\xff\x00\x01"
    assert os.stat(root / "pkg/mod.py").st_mode & stat.S_IXUSR
    assert os.readlink(root / "deep/er/x.py") == str(host / "secret.txt")
    assert tree(replica.box) == tree(original.box)
    assert (host / "secret.txt").read_text() == SECRET
    assert_no_host_content(tmp_path)


def test_an_entry_from_an_older_harness_format_is_never_served(
    make_box: Callable[..., Toolbox], memo: ExecutionMemo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memo_module, "FORMAT_VERSION", memo_module.FORMAT_VERSION - 1)
    old = Run(memo, make_box("a"), "policy")
    assert old.dispatch("edit_entity", EDIT)["ok"]
    monkeypatch.undo()
    new = Run(memo, make_box("b"), "policy")
    assert new.dispatch("edit_entity", EDIT)["ok"]
    assert new.ran == ["edit_entity"]  # the older entry was not served


def test_a_harness_fault_inside_a_tool_is_raised_through_the_memo_and_not_stored(
    make_box: Callable[..., Toolbox],
    memo: ExecutionMemo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Path:
        raise RuntimeError("disk driver bug")

    monkeypatch.setattr(safefs, "write_bytes", broken)
    run = Run(memo, make_box("a"))
    with pytest.raises(HarnessFault, match="write_file failed: RuntimeError: disk driver bug"):
        run.dispatch("write_file", {"path": "new.py", "content": "x = 1\n"})
    assert entries(tmp_path) == []
