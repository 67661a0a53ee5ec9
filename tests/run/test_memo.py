"""The execution memo: keyed by the workspace's tree, replays edits, never memoizes reads."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_toolpolicy.primitives import Toolbox, Workspace
from pytest_toolpolicy.primitives.envelope import Envelope
from pytest_toolpolicy.run.memo import ExecutionMemo, MemoDispatch, grade_key

FILES = {
    "pkg/__init__.py": "",
    "pkg/mod.py": "def double(x):\n    return x * 2\n",
    "tests/test_mod.py": "from pkg.mod import double\n\n\ndef test_double():\n"
    "    assert double(2) == 4\n",
}
EDIT = {
    "selector": "pkg.mod.double",
    "search": "return x * 2",
    "replace": "y = x\n    return y * 2",
}


class Counting:
    """The toolbox's dispatch, counting the calls that reach it."""

    def __init__(self, toolbox: Toolbox) -> None:
        self.toolbox = toolbox
        self.calls: list[str] = []

    def __call__(self, tool: str, args: dict[str, Any]) -> Envelope:
        self.calls.append(tool)
        return self.toolbox.call(tool, args)


@pytest.fixture
def make_box(tmp_path: Path) -> Callable[[str], Toolbox]:
    def make(name: str) -> Toolbox:
        root = tmp_path / name
        for rel, text in FILES.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
        # No other pytest plugin of this venv in the sandboxed runs, as the A/B's own toolbox
        # (run/arms.py): loading them costs ~2.4 s a run there.
        env = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
        return Toolbox(root, workspace=Workspace.create(root), sandbox_env=env)

    return make


def dispatch(memo: ExecutionMemo | None, toolbox: Toolbox) -> tuple[MemoDispatch, Counting]:
    inner = Counting(toolbox)
    return MemoDispatch(memo, inner, toolbox, "policy"), inner


def test_identical_run_test_at_the_same_tree_is_a_hit_and_a_changed_tree_misses(
    make_box: Callable[[str], Toolbox],
) -> None:
    box = make_box("ws")
    run, inner = dispatch(ExecutionMemo(None), box)
    args = {"target": "tests/test_mod.py", "timeout": 60}
    first = run("run_test", args)
    assert first["ok"] and first["data"]["passed"], first
    second = run("run_test", args)
    assert second == first
    assert inner.calls == ["run_test"]
    assert (run.stats.calls, run.stats.executed, run.stats.hits) == (2, 1, 1)

    (box.root / "pkg/mod.py").write_text("def double(x):\n    return x * 3\n", encoding="utf-8")
    run.invalidate()  # the file changed behind the dispatch's back
    third = run("run_test", args)
    assert inner.calls == ["run_test", "run_test"]
    assert third["data"]["passed"] is False
    assert (run.stats.calls, run.stats.executed, run.stats.hits) == (3, 2, 1)


def test_an_edit_replayed_in_an_identical_workspace_reaches_the_same_tree(
    make_box: Callable[[str], Toolbox],
) -> None:
    memo = ExecutionMemo(None)
    original, replica = make_box("a"), make_box("b")
    assert original.workspace and replica.workspace
    assert original.workspace.tree_hash() == replica.workspace.tree_hash()
    span_before = replica.index.get("pkg.mod.double")
    assert span_before is not None and span_before.end == 2

    first, first_inner = dispatch(memo, original)
    recorded = first("edit_entity", EDIT)
    assert recorded["ok"], recorded
    assert first_inner.calls == ["edit_entity"]

    second, second_inner = dispatch(memo, replica)
    replayed = second("edit_entity", EDIT)
    assert replayed == recorded
    assert second_inner.calls == []  # the memo served it...
    # ...yet it counts as the item's own: another item's results are the memo's, not its
    # figures (they would depend on which ran first).
    assert second.stats.hits == 0 and second.stats.executed == 1
    text = (replica.root / "pkg/mod.py").read_text(encoding="utf-8")
    assert text == (original.root / "pkg/mod.py").read_text(encoding="utf-8")
    assert "y = x" in text
    assert replica.workspace.tree_hash() == original.workspace.tree_hash()
    span_after = replica.index.get("pkg.mod.double")
    assert span_after is not None and span_after.end == 3  # the index saw the added line


def test_read_only_tools_are_memoized_under_one_tree_hash(
    make_box: Callable[[str], Toolbox], monkeypatch: pytest.MonkeyPatch
) -> None:
    box = make_box("ws")
    assert box.workspace is not None
    hashes: list[str] = []
    real = box.workspace.tree_hash
    monkeypatch.setattr(box.workspace, "tree_hash", lambda: hashes.append("h") or real())
    run, inner = dispatch(ExecutionMemo(None), box)
    for _ in range(2):
        assert run("read_entity", {"selector": "pkg.mod.double"})["ok"]
        assert run("search_symbol", {"query": "double"})["ok"]
    assert inner.calls == ["read_entity", "search_symbol"]  # the second round was served
    assert (run.stats.calls, run.stats.executed, run.stats.hits) == (4, 2, 2)
    assert len(hashes) == 1  # reads change nothing: the first hash stays right


def test_without_a_memo_every_call_runs(make_box: Callable[[str], Toolbox]) -> None:
    box = make_box("ws")
    run, inner = dispatch(None, box)
    bad = {"selector": "pkg.mod.double", "search": "absent", "replace": "x"}
    run("edit_entity", bad)
    run("edit_entity", bad)
    assert inner.calls == ["edit_entity", "edit_entity"]
    assert (run.stats.calls, run.stats.executed, run.stats.hits) == (2, 2, 0)


def test_sqlite_memo_is_shared_between_instances_and_the_first_write_wins(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "memo.sqlite"
    writer, reader = ExecutionMemo(path), ExecutionMemo(path)
    try:
        assert reader.get("k") is None
        writer.put("k", {"envelope": {"ok": True}, "n": 1})
        assert reader.get("k") == {"envelope": {"ok": True}, "n": 1}
        reader.put("k", {"n": 2})
        assert writer.get("k") == {"envelope": {"ok": True}, "n": 1}
        assert reader.get("k") == {"envelope": {"ok": True}, "n": 1}
    finally:
        writer.close()
        reader.close()
    reopened = ExecutionMemo(path)
    assert reopened.get("k") == {"envelope": {"ok": True}, "n": 1}
    reopened.close()


def test_in_memory_memo_keeps_the_first_value() -> None:
    memo = ExecutionMemo(None)
    assert memo.path is None and memo.get("k") is None
    memo.put("k", [1, 2])
    memo.put("k", [3])
    assert memo.get("k") == [1, 2]
    memo.close()  # a no-op without a database
    assert memo.get("k") == [1, 2]


def test_grade_key_differs_by_tree_instance_and_test_visibility() -> None:
    base = grade_key("inst-1", "tree-a", None, True)
    assert base == grade_key("inst-1", "tree-a", None, True)
    variants = {
        grade_key("inst-1", "tree-b", None, True),
        grade_key("inst-2", "tree-a", None, True),
        grade_key("inst-1", "tree-a", None, False),
        grade_key("inst-1", "tree-a", "/usr/bin/python3.11", True),
    }
    assert len(variants) == 4 and base not in variants


def test_an_item_s_figures_count_its_own_earlier_calls_only(
    make_box: Callable[[str], Toolbox],
) -> None:
    """A rerun repeating its item's own call counts it as a hit; the same call already made by
    another item, served by the memo alike, counts as the item's execution: the figures are
    the same whatever ran first."""
    from pytest_toolpolicy.run.memo import MemoDispatch

    memo = ExecutionMemo(None)
    other, mine = make_box("a"), make_box("b")
    dispatch(memo, other)[0]("edit_entity", EDIT)  # another item first
    seen: set[str] = set()
    first = MemoDispatch(
        memo, lambda t, a: {"ok": True, "error": None, "data": {}}, mine, "s", seen
    )
    first("read_entity", {"selector": "pkg.mod.double"})
    rerun = MemoDispatch(
        memo, lambda t, a: {"ok": True, "error": None, "data": {}}, mine, "s", seen
    )
    rerun("read_entity", {"selector": "pkg.mod.double"})
    assert (first.stats.executed, first.stats.hits) == (1, 0)
    assert (rerun.stats.executed, rerun.stats.hits) == (0, 1)
