"""The independent signals of a pytest run held against each other: each disagreement named,
none for an honest run of any pytest's summary format."""

from __future__ import annotations

import pytest

from pytest_toolpolicy.grading import records
from pytest_toolpolicy.grading.signals import disagreements, summary_counts


def run(status: int = 1, exited: int | None = 1, **counts: int) -> records.TestRun:
    tally = {"passed": 3, "failed": 1, "error": 0, **counts}
    return records.TestRun({}, (), {}, 4, True, "t.py::test_x", status, tally, exited)


@pytest.mark.parametrize(
    ("line", "counts"),
    [
        ("1 failed, 3 passed in 0.02s", {"failed": 1, "passed": 3}),
        ("===== 1 failed, 3 passed in 0.05 seconds =====", {"failed": 1, "passed": 3}),
        ("=== 2 errors, 1 xfailed, 3 warnings in 1.20s (0:00:01) ===",
         {"error": 2, "xfailed": 1, "warning": 3}),
        ("\x1b[31m1 failed\x1b[0m, \x1b[32m3 passed\x1b[0m in 0.02s", {"failed": 1, "passed": 3}),
        ("no tests ran in 0.01s", {}),
    ],
)  # fmt: skip
def test_summary_lines_of_every_format(line: str, counts: dict[str, int]) -> None:
    assert summary_counts(f"..F.\nFAILED t.py::test_x\n{line}\n") == counts


def test_an_honest_run_agrees() -> None:
    assert disagreements(run(), 1, "1 failed, 3 passed in 0.02s\n") == []
    assert summary_counts("E   assert 0 == 0.5\n") is None


@pytest.mark.parametrize(
    ("given", "exit_code", "output", "said"),
    [
        (run(), 0, "1 failed, 3 passed in 0.1s", "pytest returned 1 but the process exited 0"),
        (run(exited=None), 1, "1 failed, 3 passed in 0.1s",
         "the session's end was reported but pytest never returned"),
        (run(status=0), 1, "1 failed, 3 passed in 0.1s",
         "the session ended with status 0 but pytest returned 1"),
        (run(status=0, exited=0), 0, "1 failed, 3 passed in 0.1s",
         "the process exited 0 with 1 failure(s) or error(s) reported"),
        (run(failed=0), 1, "4 passed in 0.1s",
         "the process exited 1 (tests failed) with no failure or error reported"),
        (run(), 1, "", "pytest's summary line is missing from its output"),
        (run(status=0, exited=0, failed=0, passed=4), 0, "1 failed, 3 passed in 0.1s",
         "failed 0 reported, 1 in pytest's summary"),
    ],
)  # fmt: skip
def test_each_disagreement_is_named(
    given: records.TestRun, exit_code: int, output: str, said: str
) -> None:
    assert said in disagreements(given, exit_code, output)


def test_no_summary_to_compare_where_the_repository_silences_it() -> None:
    assert disagreements(run(), 1, "", summary=False) == []
