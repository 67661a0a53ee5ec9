"""The own runner's log held against its reporter: where the log recorded a status for a
graded id, it must be the reporter's."""

from __future__ import annotations

import pytest

from pytest_toolpolicy.grading.crosscheck import Disagreement, check, disagreements
from pytest_toolpolicy.grading.run import Tampered


def test_what_disagrees_and_what_does_not() -> None:
    reported = {"a": "failed", "b": "passed", "c": "passed", "d": "error", "f": "skipped"}
    statuses = {"a": "PASSED", "b": "PASSED", "d": "ERROR", "e": "PASSED", "f": "FAILED"}
    assert disagreements(reported, statuses, ["a", "b", "c", "d", "e", "f"]) == [
        "a: log passed, reporter failed",
        "e: log passed, reporter never reported it",
        "f: log failed, reporter skipped",
    ]
    # c: the log lost its line (a test's output split it): nothing to hold against
    assert disagreements(reported, statuses, ["b", "c", "d"]) == []


def test_a_disagreement_is_tampering_with_the_reporters_word() -> None:
    reported = {f"t{n}": "failed" for n in range(7)}
    with pytest.raises(Disagreement) as raised:
        check(reported, dict.fromkeys(reported, "PASSED"), list(reported))
    assert isinstance(raised.value, Tampered) and raised.value.tests == reported
    assert str(raised.value) == (
        "the runner's log and its reporter disagree on t0: log passed, reporter failed; "
        "t1: log passed, reporter failed; t2: log passed, reporter failed; "
        "t3: log passed, reporter failed; t4: log passed, reporter failed; ... 2 more"
    )
    check(reported, {"t0": "FAILED"}, list(reported))  # agreeing: nothing raised
