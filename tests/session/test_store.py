"""Finished items are written whole or not at all, and only good rows are resumed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_toolpolicy.session.store import LOCK_NAME, ItemStore, ReportDirError, claim, prepare
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
    assert store.load("a/b c") == {
        "item": "a/b c", "attempt": None, "row": {"status": "ok"}, "trajectory": None,
    }  # fmt: skip


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


def test_a_record_with_lone_surrogates_and_deep_nesting_is_saved(tmp_path: Path) -> None:
    store = ItemStore(tmp_path)
    deep: object = "leaf"
    for _ in range(500):
        deep = {"a": deep}
    row = {"status": "ok", "error": "bad \ud800 text"}
    store.save(ITEM, row, trajectory(patch="+x = '\udcff'\n"), attempt="a1")
    text = store.path(ITEM).read_bytes().decode("utf-8")  # valid UTF-8 on disk
    assert "\\ud800" in text
    record = store.load(ITEM)
    assert record is not None and record["attempt"] == "a1"
    assert record["row"]["error"] == "bad \\ud800 text"
    store.save("deep", {"status": "ok", "args": deep}, None)
    assert (store.read("deep") or {})["row"]["status"] == "ok"


def test_read_returns_error_rows_that_load_skips(tmp_path: Path) -> None:
    store = ItemStore(tmp_path)
    store.save(ITEM, {"status": "error", "error": "boom"}, None, attempt="x")
    assert store.load(ITEM) is None
    assert (store.read(ITEM) or {})["attempt"] == "x"


def test_prepare_names_the_path_and_the_reason(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(ReportDirError, match=f"cannot write to {blocker}/.*: Not a directory"):
        prepare(blocker / "report")
    prepare(tmp_path / "fine")
    assert (tmp_path / "fine" / "items").is_dir()
    assert list((tmp_path / "fine" / "items").iterdir()) == []  # the probe is gone


def test_a_claimed_directory_is_refused_with_the_holders_pid(tmp_path: Path) -> None:
    held = claim(tmp_path)
    try:
        assert (tmp_path / LOCK_NAME).read_text() == str(os.getpid())
        with pytest.raises(ReportDirError, match=f"another session \\(pid {os.getpid()}\\)"):
            claim(tmp_path)
    finally:
        held.close()
    claim(tmp_path).close()  # released with its file
