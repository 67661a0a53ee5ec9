from __future__ import annotations

from pathlib import Path

import pytest

from pytest_toolpolicy.bench.gold import baseline_moves
from pytest_toolpolicy.current.tools import MAX_READ_LINES, call_tool, tail_chars
from pytest_toolpolicy.primitives import Toolbox

STORE = "memstore/store.py"


def test_read_file_numbers_lines_and_honours_the_range(box: Toolbox) -> None:
    env = call_tool(box, "read_file", {"path": STORE, "start": 22, "end": 23})
    assert env["ok"], env
    assert env["data"]["content"].splitlines() == [
        "    22\t        value, expires = self._items[key]",
        "    23\t        if expires is not None and self._clock() > expires:",
    ]
    assert not env["data"]["truncated"]


def test_read_file_caps_long_files_and_says_so(box: Toolbox) -> None:
    (box.root / "long.txt").write_text("".join(f"line {i}\n" for i in range(1000)))
    data = call_tool(box, "read_file", {"path": "long.txt"})["data"]
    assert data["truncated"] and data["end"] == MAX_READ_LINES
    assert f"start={MAX_READ_LINES + 1}" in data["content"].splitlines()[-1]


def test_write_file_creates_directories(box: Toolbox) -> None:
    env = call_tool(box, "write_file", {"path": "scripts/repro.py", "content": "print(1)\n"})
    assert env["ok"] and env["data"]["created"]
    assert (box.root / "scripts/repro.py").read_text() == "print(1)\n"


def test_edit_file_replaces_exactly_one_match_and_shows_the_spot(box: Toolbox) -> None:
    args = {"path": STORE, "old": "self._clock() > expires", "new": "self._clock() >= expires"}
    env = call_tool(box, "edit_file", args)
    assert env["ok"] and env["data"]["line"] == 23
    assert "self._clock() >= expires" in env["data"]["snippet"]
    assert "self._clock() >= expires" in (box.root / STORE).read_text()


def test_edit_file_errors_are_specific(box: Toolbox) -> None:
    before = (box.root / STORE).read_text()
    missing = call_tool(box, "edit_file", {"path": STORE, "old": "no such text", "new": "x"})
    several = call_tool(box, "edit_file", {"path": STORE, "old": "return default", "new": "x"})
    assert "not found" in missing["error"]
    assert "matched 2 times" in several["error"]
    assert (box.root / STORE).read_text() == before


@pytest.mark.parametrize(
    ("tool", "args", "error"),
    [
        ("grep", {"pattern": "x"}, "unknown tool"),
        ("read_file", {"file": STORE}, "invalid args"),
        ("read_file", [STORE], "must be an object"),
        ("read_file", {"path": "nope.py"}, "not found"),
        ("read_file", {"path": STORE, "start": "1"}, "integers"),
        ("bash", {"command": ""}, "non-empty"),
        ("write_file", {"path": "a.py", "content": 3}, "must be a string"),
    ],
)
def test_bad_calls_come_back_as_errors(box: Toolbox, tool: str, args, error: str) -> None:
    env = call_tool(box, tool, args)
    assert env["ok"] is False and error in env["error"]


@pytest.mark.parametrize("path", ["../outside.txt", "/tmp/outside.txt", "memstore/../../x.txt"])
@pytest.mark.parametrize("tool", ["read_file", "write_file", "edit_file"])
def test_paths_leaving_the_workspace_are_refused(box: Toolbox, tool: str, path: str) -> None:
    outside = box.root.parent / "outside.txt"
    outside.write_text("keep\n")
    args = {"path": path, "content": "x", "old": "keep", "new": "gone"}
    args = {k: v for k, v in args.items() if k in _PARAMS[tool]}
    env = call_tool(box, tool, args)
    assert env["ok"] is False and "outside the workspace" in env["error"]
    assert outside.read_text() == "keep\n"
    assert not (box.root.parent / "x.txt").exists()


def test_an_absolute_path_inside_the_workspace_is_accepted(box: Toolbox) -> None:
    assert call_tool(box, "read_file", {"path": str(box.root / STORE)})["ok"]


def test_a_symlink_out_of_the_workspace_is_refused(box: Toolbox, tmp_path: Path) -> None:
    (tmp_path / "secret").write_text("s")
    (box.root / "link").symlink_to(tmp_path / "secret")
    assert "symbolic link" in call_tool(box, "read_file", {"path": "link"})["error"]


def test_bash_runs_in_the_sandbox_with_the_workspace_writable(box: Toolbox) -> None:
    if box.sandbox.mode != "bwrap":
        pytest.skip(f"needs bubblewrap: {box.sandbox.notes}")
    env = call_tool(box, "bash", {"command": "echo hi > made.txt && cat /proc/net/dev; exit 3"})
    data = env["data"]
    assert env["ok"] and data["exit_code"] == 3 and data["sandbox"] == "bwrap"
    assert (box.root / "made.txt").read_text() == "hi\n"
    interfaces = [line.split(":")[0].strip() for line in data["output"].splitlines()[2:]]
    assert interfaces == ["lo"]


def test_bash_merges_stderr_and_reports_timeouts(box: Toolbox) -> None:
    merged = call_tool(box, "bash", {"command": "echo out; echo err >&2"})
    assert merged["data"]["output"] == "out\nerr\n"
    slow = call_tool(box, "bash", {"command": "sleep 5", "timeout": 0.5})
    assert slow["ok"] is False and "timed out" in slow["error"] and slow["data"]["timed_out"]


def test_tail_chars_keeps_the_end_with_a_marker() -> None:
    text = "".join(f"{i}\n" for i in range(5000))
    kept, cut = tail_chars(text, 100)
    assert cut and kept.startswith("[... ") and kept.endswith("4999\n")
    assert tail_chars("short", 100) == ("short", False)


@pytest.mark.parametrize(
    ("tool", "args", "moves"),
    [
        ("read_file", {"path": STORE}, {"read_entity"}),
        ("write_file", {"path": STORE, "content": ""}, {"edit_entity"}),
        ("edit_file", {"path": STORE, "old": "a", "new": "b"}, {"edit_entity"}),
        ("bash", {"command": "python -m pytest tests -q"}, {"run_test"}),
        ("bash", {"command": "grep -rn expires ."}, {"search_symbol", "search_code"}),
        ("bash", {"command": "sed -n 1,20p memstore/store.py"}, {"read_entity"}),
        ("bash", {"command": "python repro.py"}, {"execute"}),
    ],
)
def test_baseline_moves_maps_each_tool_as_documented(tool: str, args, moves) -> None:
    assert baseline_moves(tool, args) == moves


def test_baseline_moves_maps_submit_to_stop() -> None:
    assert baseline_moves("submit", {"message": "done"}) == {"stop"}


_PARAMS = {
    "read_file": {"path"},
    "write_file": {"path", "content"},
    "edit_file": {"path", "old", "new"},
}


def test_edit_file_counts_overlapping_matches(box: Toolbox) -> None:
    (box.root / "notes.txt").write_text("a\n\n\nb\n")
    env = call_tool(box, "edit_file", {"path": "notes.txt", "old": "\n\n", "new": "\n"})
    assert "matched 2 times" in env["error"]
    assert (box.root / "notes.txt").read_text() == "a\n\n\nb\n"
