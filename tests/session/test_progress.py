"""The live progress of an A/B session: item lines, the running summary and when it is due, off
hand-built rows."""

from __future__ import annotations

import json
import math
import os
import threading
from types import SimpleNamespace

import pytest

from pytest_toolpolicy.decide.variants import ItemSpec
from pytest_toolpolicy.run.row import error_row
from pytest_toolpolicy.session.progress import INTERVAL_S, Progress, level_for
from pytest_toolpolicy.session.progress_lines import (
    clock,
    eta,
    item_line,
    item_nodes,
    resolved_by_group,
    row_in,
    spend,
    summary_line,
)
from pytest_toolpolicy.session.ticker import ENV, TerminalCopy, Ticker, interval_from_env

from ..decide.results_factory import item


def test_an_item_line_says_what_ran_how_it_ended_and_what_it_cost() -> None:
    row = item(instance_id="x__y-1", variant="current", resolved=False, outcome="budget_exhausted",
               turns=3, tokens=9796, cost_usd=0.0024, cf_cost_usd=0.0009, duration_s=6.83)  # fmt: skip
    assert item_line(row, 1, 4, trial=False) == (
        "toolpolicy [1/4] x__y-1 current: unresolved (budget_exhausted), 3 turns, 9796 tokens,"
        " $0.0024 (+$0.0009 reruns), 6.8 s"
    )


def test_an_item_line_names_the_trial_and_marks_what_is_unknown() -> None:
    row = item(instance_id="x__y-1", variant="cand:issue-first", trial=2, cost_usd=math.nan,
               tokens_unknown=True, tokens=12)  # fmt: skip
    line = item_line({**row, "resumed": True}, 3, None, trial=True)
    assert line == (
        "toolpolicy [3] x__y-1 cand:issue-first t2: resolved (stop), 4 turns, >=12 tokens,"
        " unpriced, resumed"
    )


def test_a_harness_fault_row_shows_its_error_and_nothing_it_lacks() -> None:
    spec = ItemSpec("x__y-1", "policy", gate="trigger.test")
    row = error_row(spec, {}, "harness fault: RuntimeError: " + "boom " * 40)
    line = item_line(row, 2, 2, trial=False)
    assert line.startswith("toolpolicy [2/2] x__y-1 policy-no:trigger.test: error (harness fault")
    assert line.endswith("...)") and len(line) < 140
    assert "turns" not in line and "$" not in line


def test_resolved_counts_measured_items_by_arm_folding_candidates_and_ablations() -> None:
    rows = [
        item(variant="policy-no:trigger.test", resolved=True),
        item(variant="current", resolved=False),
        item(variant="current", resolved=True),
        item(variant="policy", resolved=True),
        item(variant="cand:a", resolved=False),
        item(variant="cand:b", resolved=True),
        item(variant="policy-no:retrieve.embed", resolved=False),
        error_row(ItemSpec("i", "current"), {}, "harness fault: x"),
    ]
    assert resolved_by_group(rows) == [
        ("current", 1, 2),
        ("policy", 1, 1),
        ("candidates", 1, 2),
        ("ablations", 1, 2),
    ]


def test_spend_counts_this_sessions_items_and_their_reruns() -> None:
    rows = [
        item(cost_usd=0.25, cf_cost_usd=0.5),
        item(cost_usd=2.0, cf_cost_usd=0.0),
        {**item(cost_usd=10.0), "resumed": True},  # spent by an earlier session
        error_row(ItemSpec("i", "current"), {}, "harness fault: x"),
    ]
    assert spend(rows) == "$2.75 spent"
    assert spend([*rows, item(cost_usd=math.nan)]) == "$2.75 spent (+1 unpriced)"
    assert spend([item(cost_usd=math.nan), item(cost_usd=math.nan)]) == "unpriced"
    assert spend([item(cost_usd=0.0012, cf_cost_usd=0.0)]) == "$0.0012 spent"


def test_eta_is_the_pace_so_far_and_unknown_before_anything_ran() -> None:
    assert eta(30.0, 3, 7) == pytest.approx(70.0)
    assert eta(30.0, 0, 7) is None
    assert [clock(s) for s in (0.4, 59.6, 308, 3725)] == ["0 s", "1 min 0 s", "5 min 8 s",
                                                           "1 h 2 min"]  # fmt: skip


def test_the_summary_says_done_of_total_resolved_spend_and_time_left() -> None:
    rows = [
        item(variant="current", resolved=False, cost_usd=0.01, cf_cost_usd=0.0),
        item(variant="policy", resolved=True, cost_usd=0.02, cf_cost_usd=0.0),
        {**item(variant="current", instance_id="j", cost_usd=1.0), "resumed": True},
        error_row(ItemSpec("k", "policy"), {}, "model error: x"),
    ]
    line = summary_line(rows, 10, 30.0, final=False)
    # 3 items ran in 30 s: the 6 left take ~60 s.
    assert line == (
        "toolpolicy progress: 4/10 items (1 resumed) | resolved current 1/2, policy 1/1"
        " | 1 not measured | $0.0300 spent | 30 s, ~1 min 0 s left"
    )
    assert summary_line(rows, 4, 61.0, final=True).endswith("| done in 1 min 1 s")
    assert summary_line(rows, 10, 61.0, final=True).endswith("| 1 min 1 s")  # stopped early
    assert summary_line(rows, None, 5.0, final=False).startswith("toolpolicy progress: 4 items")


def test_a_summary_is_due_at_each_tenth_of_the_items_and_after_the_interval() -> None:
    progress = Progress()
    progress.start(20, now=100.0)
    shown = []
    for n in range(20):
        progress.add(item(instance_id=f"i-{n}"))
        if progress.due(101.0, steps=True):
            shown.append(progress.summary(101.0))
    assert [line.split(" | ")[0] for line in shown] == [
        f"toolpolicy progress: {n}/20 items" for n in range(2, 20, 2)
    ]  # the 20th waits for the final summary
    assert progress.summary(102.0, final=True).endswith("done in 2 s")

    verbose = Progress()
    verbose.start(20, now=0.0)
    verbose.add(item(instance_id="a"))
    verbose.add(item(instance_id="b"))
    assert not verbose.due(1.0, steps=False)  # -v: item lines say it; only time is due
    assert verbose.due(INTERVAL_S, steps=False)


def test_a_rerun_item_replaces_its_row() -> None:
    progress = Progress()
    progress.start(2, now=0.0)
    progress.add(item(resolved=False))
    assert progress.add(item(resolved=True)).startswith("toolpolicy [1/2]")
    assert "policy 1/1" in progress.summary(1.0)


def test_rows_come_from_the_report_property_and_ids_are_counted_when_they_are_items() -> None:
    row = item()
    properties = [("other", 3), ("toolpolicy_row", json.dumps({"row": row, "attempt": "a"}))]
    assert row_in(properties, "toolpolicy_row") == row
    assert row_in([("other", "x")], "toolpolicy_row") is None
    ids = [
        "test_ab.py::test_instance[x-1-current]",
        "test_ab.py::test_instance[x-1-policy-no:trigger.test]",
        "test_mine.py::test_it[fast-x-1-policy]",  # a project's own parameter around it
        "test_other.py::test_plain",
        "test_other.py::test_param[3]",
    ]
    wanted = ["x-1-current", "x-1-policy", "x-1-policy-no:trigger.test"]
    assert item_nodes(ids, wanted) == set(ids[:3])


@pytest.mark.parametrize(("verbosity", "level"), [(2, "items"), (1, "items"), (0, "summary"),
                                                  (-1, "summary"), (-2, "off")])  # fmt: skip
def test_the_level_follows_verbosity(verbosity: int, level: str) -> None:
    assert level_for(verbosity) == level


def test_the_summary_says_how_many_items_are_running_until_the_end() -> None:
    rows = [item(variant="current", resolved=False, cost_usd=0.01, cf_cost_usd=0.0)]
    line = summary_line(rows, 4, 40.0, final=False, running=2)
    assert line.startswith("toolpolicy progress: 1/4 items, 2 running | resolved current 0/1 |")
    assert summary_line([], 4, 30.0, final=False, running=2) == (
        "toolpolicy progress: 0/4 items, 2 running | resolved none yet | $0.0000 spent | 30 s"
    )
    assert "running" not in summary_line(rows, 4, 40.0, final=True, running=2)


def test_a_summary_is_due_on_the_clock_while_items_run_even_when_none_finished() -> None:
    progress = Progress(interval=30.0)
    progress.start(4, now=0.0)
    assert not progress.tick_due(31.0)  # nothing running: nothing to wait for
    progress.begin("t.py::test_instance[a-current]")
    progress.begin("t.py::test_instance[a-policy]")
    assert not progress.tick_due(29.0) and progress.next_tick(29.0) == pytest.approx(1.0)
    assert progress.tick_due(30.0)
    assert progress.summary(30.0).startswith("toolpolicy progress: 0/4 items, 2 running |")
    assert not progress.tick_due(59.0) and progress.next_tick(59.0) == pytest.approx(1.0)
    progress.end("t.py::test_instance[a-current]")
    progress.add(item(instance_id="a", variant="current"))  # a row's summary resets the clock
    assert progress.due(61.0, steps=False)
    assert ", 1 running |" in progress.summary(61.0)
    assert not progress.tick_due(90.0) and progress.tick_due(91.0)
    progress.end("t.py::test_instance[a-policy]")
    progress.end("t.py::test_instance[a-policy]")  # its row, then its end: once is enough
    assert not progress.tick_due(200.0)


def test_a_wait_for_another_process_lock_is_said_once_and_in_each_summary_until_it_ends() -> None:
    progress = Progress()
    progress.start(2, now=0.0)
    progress.begin("t.py::test_instance[a-current]")
    wait = "waiting for a-current held by pid 7 since 10:00:00"
    assert progress.wait({"a-current": wait}) == [f"toolpolicy: {wait}"]
    assert progress.wait({"a-current": wait}) == []  # said already
    assert progress.summary(5.0).startswith(
        f"toolpolicy progress: 0/2 items, 1 running | {wait} | resolved none yet |"
    )
    other = "waiting for a-current held by pid 8 since 10:01:00"  # another holder since
    assert progress.wait({"a-current": other}) == [f"toolpolicy: {other}"]
    progress.add(item(instance_id="a", variant="current"))  # its row: the wait is over
    assert "waiting" not in progress.summary(6.0)
    assert progress.wait({}) == [] and "waiting" not in progress.summary(7.0, final=True)


@pytest.mark.parametrize(("text", "seconds"), [("", 30.0), ("0.25", 0.25), (" 600 ", 600.0)])
def test_the_interval_is_a_setting(text: str, seconds: float) -> None:
    assert interval_from_env(30.0, {ENV: text}) == seconds


@pytest.mark.parametrize("text", ["soon", "0", "-1", "nan", "inf"])
def test_a_bad_interval_says_what_it_must_be(text: str) -> None:
    with pytest.raises(ValueError, match=f"{ENV} must be a positive number of seconds"):
        interval_from_env(30.0, {ENV: text})


def test_the_ticker_calls_under_the_lock_and_never_after_stop() -> None:
    lock = threading.RLock()
    calls: list[bool] = []
    twice = threading.Event()

    def tick() -> float:
        calls.append(lock._is_owned())  # held by this thread (what Condition asks too)
        if len(calls) >= 2:
            twice.set()
        return 0.0

    ticker = Ticker(tick, lock)
    ticker.start(0.0)
    assert twice.wait(60)
    ticker.stop()
    assert not ticker.running  # joined: no call can come after stop() returned
    seen = len(calls)
    ticker.stop()  # a second stop (the session's cleanup after the run loop's) is harmless
    assert len(calls) == seen and all(calls)


def test_a_tick_that_says_none_ends_the_thread() -> None:
    ended = threading.Event()
    calls: list[int] = []

    def tick() -> None:
        calls.append(1)
        ended.set()

    ticker = Ticker(tick, threading.RLock())
    ticker.start(0.0)
    assert ended.wait(60)
    ticker.stop()
    assert calls == [1] and not ticker.running


@pytest.mark.parametrize(
    ("open_line", "width", "shown"),
    [
        ("", 0, "summary\n"),
        ("t.py::test_instance[a] ", 23, "\nsummary\nt.py::test_instance[a] "),
        (None, 4, "\nsummary\n    "),  # a writer that keeps no text: its width is kept
    ],
)
def test_a_line_past_the_capture_leaves_the_terminal_as_pytest_believes(
    open_line: str | None, width: int, shown: str
) -> None:
    """The line pytest's writer has open (an item's name, dots) is written again below the
    summary, so the terminal's column is the one the writer counts from."""
    read, write = os.pipe()
    try:
        terminal = TerminalCopy(SimpleNamespace(fileno=lambda: write, encoding="utf-8"))
        writer = SimpleNamespace(width_of_current_line=width)
        if open_line is not None:
            writer._current_line = open_line
        assert terminal.write("summary", writer)
        terminal.close()
        os.close(write)
        assert os.read(read, 1000).decode() == shown
    finally:
        os.close(read)
    assert not TerminalCopy(SimpleNamespace()).write("x", writer)  # no descriptor: not written
