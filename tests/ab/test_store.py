"""Finished items are written whole or not at all, and only good rows are resumed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_toolpolicy.ab.store import ItemStore
from pytest_toolpolicy.types import Observation, Outcome, ToolCall, Trajectory, Turn

ITEM = "django__django-1::policy::full"


def trajectory(patch: str = "") -> Trajectory:
    turn = Turn(
        0,
        completion={"text": "{}", "usage": {"prompt_tokens": 3, "completion_tokens": 1}},
        observations=(Observation("read_entity", "pkg.f", "ok", data={"ok": True}),),
        executed=(ToolCall("read_entity", {"selector": "pkg.f"}),),
    )
    return Trajectory("django__django-1", "policy", "full", "sim", (turn,), Outcome("stop"), patch)


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    store = ItemStore(tmp_path)
    row = {"status": "ok", "resolved": True, "cost": 0.25}
    store.save(ITEM, row, trajectory("diff\n"))
    assert store.path(ITEM).parent == tmp_path / "items"
    assert store.path(ITEM).name == "django__django-1::policy::full.json"
    record = store.load(ITEM)
    assert record is not None
    assert record["item"] == ITEM and record["row"] == row
    assert Trajectory.from_dict(record["trajectory"]) == trajectory("diff\n")


def test_a_row_without_a_trajectory_round_trips(tmp_path: Path) -> None:
    store = ItemStore(tmp_path)
    store.save("a/b c", {"status": "ok"}, None)
    assert store.path("a/b c").name == "a_b_c.json"
    assert store.load("a/b c") == {"item": "a/b c", "row": {"status": "ok"}, "trajectory": None}


def test_an_error_row_is_not_loaded_so_resume_retries_it(tmp_path: Path) -> None:
    store = ItemStore(tmp_path)
    store.save(ITEM, {"status": "error", "error": "sandbox died"}, None)
    assert store.path(ITEM).exists()
    assert store.load(ITEM) is None


def test_missing_and_unreadable_files_load_as_none(tmp_path: Path) -> None:
    store = ItemStore(tmp_path)
    assert store.load(ITEM) is None
    store.directory.mkdir(parents=True)
    store.path(ITEM).write_text('{"item": "x", "row": {"stat', encoding="utf-8")
    assert store.load(ITEM) is None


def test_a_crash_while_writing_keeps_the_previous_file_and_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ItemStore(tmp_path)
    store.save(ITEM, {"status": "ok", "attempt": 1}, trajectory())
    before = store.path(ITEM).read_bytes()

    def crash(src: str, dst: str) -> None:
        raise OSError("disk gone")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="disk gone"):
        store.save(ITEM, {"status": "ok", "attempt": 2}, trajectory("new\n"))
    monkeypatch.undo()
    assert store.path(ITEM).read_bytes() == before
    assert [p.name for p in store.directory.iterdir()] == [store.path(ITEM).name]
    record = store.load(ITEM)
    assert record is not None and record["row"]["attempt"] == 1


def test_clear_removes_every_item_and_tolerates_a_missing_directory(tmp_path: Path) -> None:
    store = ItemStore(tmp_path)
    store.clear()
    assert not store.directory.exists()
    store.save("one", {"status": "ok"}, None)
    store.save("two", {"status": "error"}, None)
    store.clear()
    assert list(store.directory.glob("*.json")) == []
    assert store.load("one") is None
