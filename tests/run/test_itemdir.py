"""An item's directory and its lock: one directory per report, the holder named in the lock, a
wait that leaves a note for its session and gives up after its bound, and notes and lock files
read without trusting what a shared temporary directory holds."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from pytest_toolpolicy.run.itemdir import (
    Holder,
    ItemLockTimeout,
    held,
    lock_path,
    note_path,
    report_root,
    waiting_notes,
)

ITEM = "bundled__x-1-policy"


def test_each_report_directory_has_its_own_root_and_keeps_it(tmp_path: Path) -> None:
    work = tmp_path / "work"
    a, b = tmp_path / "a" / "report", tmp_path / "b" / "report"
    assert report_root(work, a) != report_root(work, b)  # same name, elsewhere
    assert report_root(work, a) == report_root(work, Path(str(a)))  # a resumed session's
    assert report_root(work, a).parent == work and report_root(work, a).name.startswith("report-")


def test_the_holder_is_named_in_the_lock_and_a_free_lock_names_no_one(tmp_path: Path) -> None:
    directory = tmp_path / ITEM
    with held(directory, item=ITEM):
        holder = Holder.of_text(lock_path(directory).read_text())
        assert holder.pid == os.getpid() and holder.since is not None
        assert abs(holder.since - time.time()) < 60
    assert lock_path(directory).read_text() == ""


def test_a_wait_past_its_bound_fails_naming_the_holder(tmp_path: Path) -> None:
    directory = tmp_path / ITEM
    with held(directory, item=ITEM):
        start = time.monotonic()
        second = held(directory, item=ITEM, bound=0.3, token="t", poll=0.05)
        with pytest.raises(ItemLockTimeout) as caught, second:
            pytest.fail("the lock was held: the block must not run")
        assert 0.3 <= time.monotonic() - start < 10
    message = str(caught.value)
    assert f"{ITEM}: waited 0.3 s (TOOLPOLICY_LOCK_WAIT)" in message
    assert f"held by pid {os.getpid()} since " in message and str(lock_path(directory)) in message
    assert not note_path(directory).exists()  # the note goes with the wait


def test_a_waiting_process_leaves_a_note_for_its_session_until_it_gets_the_lock(
    tmp_path: Path,
) -> None:
    directory = tmp_path / ITEM
    got = threading.Event()

    def second() -> None:
        with held(directory, item=ITEM, bound=30, token="mine", poll=0.05):
            got.set()

    first = held(directory, item=ITEM)
    first.__enter__()
    waiter = threading.Thread(target=second)
    waiter.start()
    try:
        deadline = time.monotonic() + 10
        while not (notes := waiting_notes(tmp_path, "mine")) and time.monotonic() < deadline:
            time.sleep(0.02)
        (note,) = notes
        assert note.item == ITEM and note.holder.pid == os.getpid()
        assert note.describe().startswith(f"waiting for {ITEM} held by pid {os.getpid()} since ")
        assert waiting_notes(tmp_path, "another session's") == []
        assert not got.is_set()
    finally:
        first.__exit__(None, None, None)
        waiter.join(30)
    assert got.is_set() and waiting_notes(tmp_path, "mine") == []


@pytest.mark.parametrize(
    "text", ["", "not json", "[1, 2]", '{"pid": "12", "since": true}', '{"pid": 1.5}']
)
def test_a_lock_that_does_not_say_who_holds_it_reads_as_unknown(text: str) -> None:
    holder = Holder.of_text(text)
    assert holder == Holder() and holder.describe() == "a process that did not say who"


def test_a_holder_on_another_host_or_day_says_so() -> None:
    old = Holder(7, "elsewhere", time.mktime((2020, 1, 2, 3, 4, 5, 0, 0, -1)))
    assert old.describe() == "pid 7 on elsewhere since 2020-01-02 03:04:05"


def test_a_link_at_the_lock_is_refused_and_its_target_left_alone(tmp_path: Path) -> None:
    target = tmp_path / "precious"
    target.write_text("keep")
    directory = tmp_path / ITEM
    lock_path(directory).symlink_to(target)
    with pytest.raises(OSError, match="is a symbolic link"), held(directory, item=ITEM):
        pytest.fail("a link at the lock must not be taken")
    assert target.read_text() == "keep"


def test_notes_that_are_links_fifos_or_garbage_are_skipped(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text('{"token": "t", "item": "leaked"}')
    (tmp_path / "a.waiting").symlink_to(secret)
    os.mkfifo(tmp_path / "b.waiting")  # opening it for reading must not block
    (tmp_path / "c.waiting").write_bytes(b"\xff\x00 not json")
    (tmp_path / "d.waiting").write_text('{"token": "t", "item": "real", "holder": {"pid": 5}}')
    notes = waiting_notes(tmp_path, "t")
    assert [(n.item, n.holder.pid) for n in notes] == [("real", 5)]
    assert waiting_notes(tmp_path / "missing", "t") == [] and waiting_notes(tmp_path, "") == []
