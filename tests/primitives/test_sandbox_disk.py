"""The workspace disk bound: a sandboxed run that grows its writable directory past
``limits.workspace_mb`` is stopped, tree and all, and says so; nothing else is touched."""

from __future__ import annotations

import os
import re
import sys
import time
import uuid
from pathlib import Path

import pytest

from pytest_toolpolicy.primitives.diskwatch import DiskWatch, tree_bytes
from pytest_toolpolicy.primitives.execute import execute
from pytest_toolpolicy.primitives.run_test import run_test
from pytest_toolpolicy.primitives.sandbox import Sandbox, SandboxUnavailable, _workspace_check

from .proc_helpers import processes_with

MIB = 1 << 20
BOUND_MB = 20
LEFT = re.compile(
    r"the run left the workspace holding [\d.,]+ MiB, over its 20 MiB bound \(limit workspace_mb\)"
)
STOPPED = re.compile(
    rf"run stopped: the workspace holds [\d.,]+ MiB, over its {BOUND_MB} MiB bound "
    r"\(limit workspace_mb\)"
)
# One MiB every 10 ms, 300 MiB in all unless stopped: the bound has to stop it.
WRITER = (
    "import time\n"
    "for i in range(300):\n"
    "    open(f'out{i}.bin', 'wb').write(b'x' * (1 << 20))\n"
    "    time.sleep(0.01)\n"
)


@pytest.fixture(params=["bwrap", "degraded"])
def sandbox(request: pytest.FixtureRequest) -> Sandbox:
    if request.param == "degraded":
        return Sandbox.select("degraded")
    try:
        return Sandbox.select("require")
    except SandboxUnavailable as exc:
        pytest.skip(f"bubblewrap cannot run here: {exc}")


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TOOLPOLICY_LIMITS", f"workspace_mb={BOUND_MB}")
    root = tmp_path / "ws"
    root.mkdir()
    (root / "writer.py").write_text(WRITER)
    return root


def test_a_run_writing_past_the_bound_is_stopped_tree_and_all(ws: Path, sandbox: Sandbox):
    marker = f"3600.{uuid.uuid4().int % 10**9:09d}"  # a grandchild that must die with the run
    env = run_test(ws, sandbox, f"(sleep {marker} &) ; python writer.py", timeout=60)
    assert not env["ok"] and STOPPED.fullmatch(env["error"]), env["error"]
    data = env["data"]
    assert (data["passed"], data["exit_code"], data["timed_out"]) == (False, 137, False)
    assert data["duration_s"] < 10
    assert processes_with(marker) == []
    # At most the bound plus what 100 MiB/s adds in one poll (0.25 s) and the kill.
    assert BOUND_MB * MIB < tree_bytes(ws) <= (BOUND_MB + 40) * MIB


def test_the_result_carries_the_size_and_the_note(ws: Path, sandbox: Sandbox):
    result = sandbox.run(
        [sys.executable, "writer.py"],
        cwd=ws, writable=ws, stdin=None, timeout=60, merge_stderr=True,
    )  # fmt: skip
    assert result.workspace_over and STOPPED.fullmatch(result.workspace_over)
    assert result.workspace_over in result.notes
    assert result.workspace_bytes == tree_bytes(ws) > BOUND_MB * MIB


def test_a_run_under_the_bound_is_untouched(ws: Path, sandbox: Sandbox):
    writer = (
        "python -c \"open('out.bin', 'wb').write(b'x' * (5 << 20)); import time; time.sleep(1)\""
    )
    env = run_test(ws, sandbox, writer, timeout=30)
    assert env["ok"] and env["data"]["passed"], env
    result = sandbox.run(
        ["/bin/sleep", "0.6"], cwd=ws, writable=ws, stdin=None, timeout=10, merge_stderr=True
    )
    assert result.exit_code == 0 and result.workspace_over is None
    assert 5 * MIB <= result.workspace_bytes < 6 * MIB
    assert not any("workspace" in note for note in result.notes)


@pytest.mark.parametrize(
    "make",
    [
        "truncate -s 15M sparse$i",  # 60 MiB apparent, next to no blocks: what a snapshot reads
        "touch pre$i && fallocate -n -l 15M pre$i",  # 60 MiB of blocks, apparent size 0
    ],
    ids=["sparse", "preallocated"],
)
def test_sparse_and_preallocated_files_count(ws: Path, sandbox: Sandbox, make: str):
    # Each file stays under the per-file limit (RLIMIT_FSIZE = the bound); four of them do not.
    env = run_test(ws, sandbox, f"for i in 1 2 3 4; do {make}; done; sleep 3", timeout=30)
    assert not env["ok"] and STOPPED.fullmatch(env["error"]), env


def test_no_single_file_outgrows_the_bound(ws: Path, sandbox: Sandbox):
    env = run_test(ws, sandbox, "ulimit -f", timeout=30)
    assert env["data"]["output"] == f"{BOUND_MB * 1024}\n"  # RLIMIT_FSIZE, in KiB
    env = run_test(ws, sandbox, "yes | head -c 30M > big.bin", timeout=30)
    # The poll or the rlimit (SIGXFSZ), whichever comes first: the file never passes the bound.
    assert env["data"]["exit_code"] in (137, 128 + 25) and not env["ok"]
    assert (ws / "big.bin").stat().st_size <= BOUND_MB * MIB


def test_a_run_that_ends_between_two_measures_is_still_reported(tmp_path: Path):
    watch = DiskWatch(tmp_path, bound=20 * MIB)
    (tmp_path / "late.bin").write_bytes(b"l" * (25 * MIB))
    notes: list[str] = []
    over = _workspace_check(watch, stopped=False, notes=notes)
    assert over == (
        "the run left the workspace holding 25 MiB, over its 20 MiB bound (limit workspace_mb)"
    )
    assert notes == [over]
    again = DiskWatch(tmp_path, bound=20 * MIB)  # it starts over the bound and adds nothing
    assert _workspace_check(again, stopped=False, notes=notes) is None
    assert notes[-1].endswith(
        "over its 20 MiB bound (limit workspace_mb), as it did before the run"
    )


def test_the_top_git_directory_is_not_counted_a_nested_one_is(ws: Path, sandbox: Sandbox):
    for git in (ws / ".git", ws / "vendored" / ".git"):
        git.mkdir(parents=True)
        (git / "pack").write_bytes(b"p" * (30 * MIB))
        (git / "pack").touch()
    result = sandbox.run(
        ["/bin/sleep", "0.6"], cwd=ws, writable=ws, stdin=None, timeout=10, merge_stderr=True
    )
    assert 30 * MIB < result.workspace_bytes < 31 * MIB  # vendored/.git alone
    (ws / "vendored" / ".git" / "pack").unlink()
    result = sandbox.run(
        [sys.executable, "-c", "open('x', 'w').write('x'); import time; time.sleep(0.6)"],
        cwd=ws, writable=ws, stdin=None, timeout=10, merge_stderr=True,
    )  # fmt: skip
    assert result.exit_code == 0 and result.workspace_over is None
    assert result.workspace_bytes < MIB


def test_a_workspace_already_over_the_bound_may_shrink_but_not_grow(ws: Path, sandbox: Sandbox):
    (ws / "left.bin").write_bytes(b"l" * (30 * MIB))  # what an earlier stopped run left
    env = run_test(ws, sandbox, "sleep 0.6; ls", timeout=30)
    assert env["ok"], env  # reading is fine
    env = run_test(ws, sandbox, "echo more > more.txt; sleep 0.6", timeout=30)
    # Refused either way: stopped while it ran, or (when a loaded machine's watcher did not poll
    # within the run's 0.6 s) found over the bound when it ended.
    assert not env["ok"] and (STOPPED.fullmatch(env["error"]) or LEFT.fullmatch(env["error"])), env
    env = run_test(ws, sandbox, "rm left.bin; sleep 0.6", timeout=30)
    assert env["ok"] and tree_bytes(ws) < MIB, env


def test_execute_has_no_workspace_and_keeps_its_file_size_limit(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("TOOLPOLICY_LIMITS", f"workspace_mb={BOUND_MB}")
    code = "open('big.bin', 'wb').write(b'x' * (30 << 20)); import os; print(os.path.getsize('big.bin'))"
    env = execute(sandbox, code, timeout=20)
    assert env["ok"] and env["data"]["exit_code"] == 0, env
    assert env["data"]["stdout"] == f"{30 * MIB}\n"


def test_tree_bytes_never_follows_links(tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "big.bin").write_bytes(b"o" * MIB)
    root = tmp_path / "root"
    root.mkdir()
    (root / "to_file").symlink_to(outside / "big.bin")
    (root / "to_dir").symlink_to(outside)
    (root / "own.txt").write_bytes(b"a" * 10_000)
    alone = tree_bytes(root)
    assert 10_000 <= alone < MIB  # the links themselves (a block each at most), not their targets
    os.link(root / "own.txt", root / "again.txt")  # each hard link is one more file to read
    assert tree_bytes(root) >= alone + 10_000


def test_growth_of_the_filesystem_brings_the_next_measure_forward(tmp_path: Path):
    watch = DiskWatch(tmp_path, bound=20 * MIB, every=3600)  # no regular poll in this test
    assert watch(time.monotonic() + 1) is False  # nothing grew: no reason to look
    (tmp_path / "fast.bin").write_bytes(b"f" * (30 * MIB))
    assert watch(time.monotonic() + 2) is True  # statvfs saw the growth, the measure the bound
    assert watch.used >= 30 * MIB


def test_a_run_without_a_writable_directory_is_not_measured(sandbox: Sandbox):
    result = sandbox.run(
        ["/bin/true"], cwd=None, writable=None, stdin=None, timeout=10, merge_stderr=True
    )
    assert (result.exit_code, result.workspace_bytes, result.workspace_over) == (0, None, None)
