"""Reading what an own-runner reporter sent over the side channel, strictly."""

from __future__ import annotations

import json

import pytest

from pytest_toolpolicy.grading.outcomes import Failure
from pytest_toolpolicy.grading.own_records import read_own_records
from pytest_toolpolicy.grading.records import RecordError


def lines(*records: dict[str, object]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


RUN = lines(
    {"k": "hooked", "n": "sympy"},
    {"k": "start", "n": "test_a"},
    {"k": "result", "n": "test_a", "outcome": "passed"},
    {"k": "start", "n": "test_b"},
    {"k": "result", "n": "test_b", "outcome": "failed", "msg": "AssertionError", "text": "tb"},
    {"k": "start", "n": "test_c"},
    {"k": "result", "n": "test_c", "outcome": "xfailed"},
    {"k": "start", "n": "test_d"},
    {"k": "result", "n": "test_d", "outcome": "xpassed"},
    {"k": "start", "n": "test_e"},
    {"k": "result", "n": "test_e", "outcome": "skipped", "msg": "Slow"},
    {"k": "collect", "n": "/testbed/sympy/t/test_x.py", "text": "ImportError: no"},
    # a second test of the same name, later: the last result stands, as the log's last line
    {"k": "start", "n": "test_b"},
    {"k": "result", "n": "test_b", "outcome": "passed"},
    {"k": "start", "n": "test_f"},
    {"k": "result", "n": "test_f", "outcome": "error", "text": "Traceback\nKeyError: 1"},
    {"k": "finish", "status": 1},
)


def test_every_test_when_none_is_asked_for() -> None:
    run = read_own_records(RUN, None)
    assert run.outcomes == {
        "test_a": "passed",
        "test_b": "passed",
        "test_c": "passed",
        "test_d": "xpassed",
        "test_e": "skipped",
        "test_f": "error",
    }
    assert run.failures == {
        "test_e": Failure("call", "Slow", ""),
        "test_f": Failure("call", "", "Traceback\nKeyError: 1"),
    }
    assert run.collection_errors == (("/testbed/sympy/t/test_x.py", "ImportError: no"),)
    assert (run.hooked, run.results, run.status, run.last_started) == (
        frozenset({"sympy"}),
        7,
        1,
        "test_f",
    )


def test_the_ids_asked_for() -> None:
    run = read_own_records(RUN, ["test_a", "test_f", "test_nowhere"])
    assert run.outcomes == {"test_a": "passed", "test_f": "error"}
    assert list(run.failures) == ["test_f"] and run.results == 7


def test_a_runner_that_never_ended() -> None:
    run = read_own_records(lines({"k": "start", "n": "t"}), None)
    assert (run.outcomes, run.status, run.last_started, run.hooked) == ({}, None, "t", frozenset())


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"test_a ok\n", "record 1 is not JSON"),
        (b"[1]\n", "record 1 is not a record of a kind the reporters write"),
        (lines({"k": "report", "n": "t"}), "record 1 is not a record of a kind the reporters write"),
        (lines({"k": "start", "n": 3}), "record 1: n is not a string"),
        (lines({"k": "hooked", "n": "nose"}), "record 1: no reporter 'nose'"),
        (lines({"k": "result", "n": "t", "outcome": "ok"}), "record 1: outcome 'ok'"),
        (lines({"k": "result", "n": "t", "outcome": "failed"}), "record 1: a failed test without its text"),
        (lines({"k": "result", "n": "t", "outcome": "passed", "msg": 1}), "record 1: msg is not a string"),
        (lines({"k": "collect", "n": "f.py"}), "record 1: text is not a string"),
        (lines({"k": "finish", "status": True}), "record 1: status is not a number"),
        (lines({"k": "finish", "status": 0}, {"k": "finish", "status": 0}), "record 2: a second end of the runner"),
    ],
)  # fmt: skip
def test_what_no_reporter_writes_is_refused(data: bytes, why: str) -> None:
    with pytest.raises(RecordError) as refused:
        read_own_records(data, None)
    assert str(refused.value) == why
