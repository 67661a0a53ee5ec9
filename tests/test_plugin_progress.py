"""Live progress of an A/B session end to end, as a user sees it: a line per item with ``-v``,
a running summary without it, and the same under xdist, whose controller only receives rows."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from .test_plugin_ab import SAMPLE, SHORT, TEST_AB

ITEM = re.compile(
    r"toolpolicy \[(\d+)/(\d+)\] (\S+) (current|policy): (resolved|unresolved) \(\w+\),"
    r" (\d+) turns, (\d+) tokens, \$\d+\.\d{4}( \(\+\$\d+\.\d{4} reruns\))?, \d+\.\d s"
)
SUMMARY = re.compile(
    r"toolpolicy progress: (\d+)/(\d+) items(?:, \d+ running)? \| resolved (.*?) \| .* \| (.*)"
)
# Holds each item until the controller has written a summary on its clock, then lets it run:
# so a line comes while an item runs, whatever the machine's speed, and no test waits on time.
# The controller marks the file; an xdist worker, a process of its own, waits for it.
HELD = """
import os, time
import pytest_toolpolicy.run.item as item
import pytest_toolpolicy.session.progress_hooks as progress_hooks

MARK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ticked")
write_now = progress_hooks.ProgressHooks._write_now

def marked(self, lines):
    write_now(self, lines)
    open(MARK, "a").close()

progress_hooks.ProgressHooks._write_now = marked
run_item = item._run_item

def held(spec, harness, directory):
    deadline = time.monotonic() + 120
    while not os.path.exists(MARK) and time.monotonic() < deadline:
        time.sleep(0.02)
    return run_item(spec, harness, directory)

item._run_item = held
"""


@pytest.fixture
def evals(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(test_ab=TEST_AB.read_text(encoding="utf-8"))
    return pytester


def _run(evals: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, pd.DataFrame]:
    report = evals.path / "report"
    result = evals.runpytest_subprocess(
        "--toolpolicy=ab", SHORT, "-p", "no:cacheprovider", f"--toolpolicy-report={report}", *args
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    return result, pd.read_parquet(report / "results.parquet")


def _after_the_run_loop(result: pytest.RunResult) -> list[str]:
    """What a session that ran all its items printed after its final summary line (with -rA,
    the captured output of every item too)."""
    lines = result.outlines
    final = next(
        n for n, line in enumerate(lines) if SUMMARY.fullmatch(line) and " done in " in line
    )
    return lines[final + 1 :]


def _summaries(result: pytest.RunResult) -> list[tuple[str, ...]]:
    """(done, total, resolved, time) of each summary line, every one on a line of its own."""
    lines = [line for line in result.outlines if "toolpolicy progress:" in line]
    assert all(line.startswith("toolpolicy progress:") for line in lines), lines
    return [m.groups() for line in lines if (m := SUMMARY.fullmatch(line))]


@pytest.mark.slow  # a whole A/B run for its lines: ~10 s
def test_verbose_prints_a_line_per_item_as_it_finishes(evals: pytest.Pytester) -> None:
    result, rows = _run(evals, "-v", "--toolpolicy-sample=1", "--toolpolicy-seed=3")
    lines = [m for line in result.outlines if (m := ITEM.fullmatch(line))]
    assert [m[1] for m in lines] == ["1", "2"] and {m[2] for m in lines} == {"2"}
    rows = rows.set_index("variant")
    for m in lines:  # each line says what its row says
        row = rows.loc[m[4]]
        assert m[3] == row["instance_id"]
        assert (m[5] == "resolved") == bool(row["resolved"])
        assert (int(m[6]), int(m[7])) == (row["turns"], row["tokens"])
    assert {m[4] for m in lines} == {"current", "policy"}
    (final,) = _summaries(result)
    assert final[:2] == ("2", "2") and final[3].startswith("done in ")
    resolved = {v: int(r) for v, r in rows["resolved"].items()}
    assert final[2] == f"current {resolved['current']}/1, policy {resolved['policy']}/1"


def test_the_running_summary_counts_the_selected_items_and_the_time_left(
    evals: pytest.Pytester,
) -> None:
    result, rows = _run(evals, *SAMPLE, "-k", "current")  # 2 of the 4 items
    assert not [line for line in result.outlines if line.startswith("toolpolicy [")]
    first, final = _summaries(result)
    assert first[:2] == ("1", "2") and re.fullmatch(r"\d+ s, ~\d+ s left", first[3])
    assert final[:2] == ("2", "2") and final[3].startswith("done in ")
    assert final[2] == f"current {int(rows['resolved'].sum())}/2"

    quiet, _ = _run(evals, *SAMPLE, "-k", "current", "-qq", "--toolpolicy-resume")
    assert "toolpolicy progress" not in quiet.stdout.str()


@pytest.mark.slow  # an A/B under -n 2: ~20 s
def test_under_xdist_the_controller_counts_the_workers_items(evals: pytest.Pytester) -> None:
    result, rows = _run(evals, "-n", "2", "--toolpolicy-sample=1", "--toolpolicy-seed=3")
    result.stdout.fnmatch_lines(["2 workers [[]2 items[]]"])
    summaries = _summaries(result)
    assert [m[:2] for m in summaries] == [("1", "2"), ("2", "2")]
    assert summaries[-1][3].startswith("done in ")
    assert len(rows) == 2


@pytest.mark.parametrize("args", [["-q"], ["-v"]])
def test_a_summary_comes_on_the_clock_while_an_item_runs(
    evals: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    """A serial session: the item runs with its output captured, and the line still reaches
    the terminal, in its place; with -v the item's name is written again below it, so its
    PASSED lands beside it. None comes after the final summary."""
    monkeypatch.setenv("TOOLPOLICY_PROGRESS_INTERVAL", "0.05")
    evals.makeconftest(HELD)
    result, rows = _run(evals, *args, *SAMPLE, "-k", "current", "-rA")
    lines = result.outlines
    waiting = "toolpolicy progress: 0/2 items, 1 running | resolved none yet | $0.0000 spent | "
    first = next(n for n, line in enumerate(lines) if line.startswith("toolpolicy progress:"))
    assert lines[first].startswith(waiting), lines[first]
    assert len(rows) == 2
    passed = [line for line in lines if line.startswith("test_ab.py::") and " PASSED " in line]
    if "-v" in args:
        assert len(passed) == 2  # each PASSED beside its item's name, ticks or not
        assert lines[first + 1].startswith("test_ab.py::test_instance[")
    # Nothing later: not a line on the clock, nor one in an item's captured output (-rA).
    assert not [line for line in _after_the_run_loop(result) if "toolpolicy progress" in line]


@pytest.mark.slow  # an A/B under -n 2: ~20 s
def test_under_xdist_a_summary_comes_on_the_clock_with_the_items_running(
    evals: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLPOLICY_PROGRESS_INTERVAL", "0.05")
    evals.makeconftest(HELD)
    result, rows = _run(evals, "-n", "2", *SAMPLE, "-k", "current")
    lines = [line for line in result.outlines if line.startswith("toolpolicy progress:")]
    assert re.match(r"toolpolicy progress: 0/2 items, [12] running \| resolved none yet", lines[0])
    assert [m[:2] for m in _summaries(result)][-1] == ("2", "2")
    assert len(rows) == 2
    assert not [line for line in _after_the_run_loop(result) if "toolpolicy progress" in line]


def test_a_bad_interval_is_a_usage_error(
    evals: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLPOLICY_PROGRESS_INTERVAL", "soon")
    result = evals.runpytest("--toolpolicy=ab", *SAMPLE, "--collect-only")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*TOOLPOLICY_PROGRESS_INTERVAL must be a positive number*"])
