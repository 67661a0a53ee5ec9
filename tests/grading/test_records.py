"""The grading plugin's records, read as SWE-bench would record the tests' outcomes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_toolpolicy.grading.outcomes import Failure, When
from pytest_toolpolicy.grading.records import RecordError, read_records

LISTED = "t.py::test_p[a"
TRACEBACK = "fixture\nE   RuntimeError: no db\n\nc.py:5: RuntimeError"


def report(n: int, kind: str) -> dict[str, Any]:
    """One phase's record of ``t.py::test_p[a <n>]``, a test listed under the id ``t.py::test_p[a``."""
    when, outcome, xfail = {
        "passed": ("call", "passed", False),
        "skipped": ("setup", "skipped", False),
        "xfailed": ("call", "skipped", True),
        "xpassed": ("call", "passed", True),
        "error": ("setup", "failed", False),
        "teardown-error": ("teardown", "failed", False),
        "failed": ("call", "failed", False),
    }[kind]
    record = {"k": "report", "n": f"t.py::test_p[a {n}]", "ids": [LISTED], "when": when}
    record |= {"outcome": outcome, "xfail": xfail}
    if outcome == "failed":
        record |= {"msg": "", "text": TRACEBACK}
    return record


def lines(*records: dict[str, Any], finished: bool = True) -> bytes:
    """The stream the plugin writes: each report after its test's start."""
    head = [{"k": "collected", "n": len(records)}]
    tail = [{"k": "finish", "status": 0, "counts": {}}] if finished else []
    body = [
        step
        for r in records
        for step in ([{"k": "start", "n": r["n"]}] if r["k"] == "report" else []) + [r]
    ]
    return "".join(json.dumps(r) + "\n" for r in [*head, *body, *tail]).encode()


@pytest.mark.parametrize(
    ("kinds", "combined"),
    [
        (("passed", "skipped"), "passed"),  # a skip is folded into "SKIPPED [1] ...": no id
        (("skipped", "xpassed"), "xpassed"),
        (("xpassed", "xfailed"), "passed"),  # XFAIL counts as passing, XPASS records nothing
        (("failed", "passed"), "failed"),
        (("error", "failed"), "failed"),  # -rA prints errors before failures: the last wins
        (("passed", "error"), "error"),
        (("passed", "teardown-error"), "error"),  # one test: its call passed, teardown failed
        (("skipped", "skipped"), "skipped"),
    ],
)
def test_tests_sharing_a_listed_id_combine_as_swebench_records_them(
    kinds: tuple[str, ...], combined: str
) -> None:
    run = read_records(lines(*(report(n, k) for n, k in enumerate(kinds))), [LISTED])
    assert run.outcomes == {LISTED: combined} and run.finished and run.collected == len(kinds)


@pytest.mark.parametrize(("kind", "when"), [("error", "setup"), ("teardown-error", "teardown")])
def test_a_failure_reads_its_crash_from_the_traceback(kind: str, when: When) -> None:
    run = read_records(lines(report(0, kind)), [LISTED])
    assert run.outcomes == {LISTED: "error"}
    assert run.failures == {LISTED: Failure(when, "RuntimeError: no db", TRACEBACK)}


def test_collection_errors_starts_and_an_unfinished_run() -> None:
    data = [
        {"k": "start", "n": "t.py::test_a"},
        {"k": "collect", "n": "tests/test_b.py", "text": "E   ImportError: no b"},
        {"k": "start", "n": "t.py::test_hang"},
    ]
    run = read_records(lines(*data, finished=False), [])
    assert run.collection_errors == (("tests/test_b.py", "E   ImportError: no b"),)
    assert run.last_started == "t.py::test_hang" and not run.finished


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (b"garbage", "record 3 is not JSON"),
        (b"[]", "record 3 is not an object"),
        (b'{"k": "verdict", "resolved": true}', "unknown kind 'verdict'"),
        (b'{"k": "report", "n": "x", "ids": ["t.py::other"], "when": "call", "outcome": "passed"}',
         "'t.py::other' was not asked for"),
        (b'{"k": "report", "n": "x", "ids": ["t.py::test_p[a"], "when": "later", "outcome": "passed"}',
         "phase 'later'"),
        (b'{"k": "collected", "n": -1}', "n is not a count"),
        (b"[" * 100_000, "record 3 is not JSON"),
        (b'{"k": "report", "n": "x", "ids": ["t.py::test_p[a"], "when": "call", "outcome": "passed"}',
         "a report of a test that never started"),
        (b'{"k": "finish", "status": 0, "counts": {}}', "a second end of the session"),
        (b'{"k": "exit", "status": "ok"}', "status is not a count"),
    ],
)  # fmt: skip
def test_a_line_the_plugin_never_writes_is_refused(line: bytes, why: str) -> None:
    data = lines() + line + b"\n"
    with pytest.raises(RecordError, match=why.replace("[", r"\[")):
        read_records(data, [LISTED])


def test_nothing_may_follow_the_process_s_end() -> None:
    data = lines() + b'{"k": "exit", "status": 0}\n'
    assert read_records(data, [LISTED]).exited == 0
    with pytest.raises(RecordError, match="'start' after the process's end"):
        read_records(data + b'{"k": "start", "n": "t.py::late"}\n', [LISTED])


def test_a_run_that_asked_for_every_test_takes_every_id() -> None:
    """Mining asks for no list (``ids`` None): every id the plugin reports is taken, where a
    run with a list refuses one it did not ask for."""
    data = lines(report(0, "passed"))
    assert read_records(data, None).outcomes == {LISTED: "passed"}
    with pytest.raises(RecordError, match="was not asked for"):
        read_records(data, ["t.py::other"])
