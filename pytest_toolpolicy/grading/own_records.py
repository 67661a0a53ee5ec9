"""Per-test outcomes from the records an own-runner reporter (``own_unittest.py``,
``own_sympy.py``) and its launcher (``own_launch.py``) sent over the sandbox's side channel.

One JSON object a line, of these kinds: ``hooked`` (a reporter was installed, ``n`` says
which), ``start`` (a test began: ``n`` its id), ``result`` (``n`` a test's id, ``outcome`` one
of passed, failed, error, skipped, xfailed, xpassed, ``msg`` its crash or skip reason, ``text``
the traceback of a failure or error), ``collect`` (a test file that failed to load), and
``finish`` (the runner script ended, ``status`` the status it exits with).

A test reported more than once takes its last result, as SWE-bench's parsers keep the last
status line of a test; an expected failure counts as passed (as grading counts pytest's xfail)
and an unexpected success as "xpassed" (not passed). Ids the caller did not ask for are
dropped: the reporter reports every test the runner runs.

Pure functions over bytes. A line that is not a record of these shapes is refused
(``RecordError``), as ``records.py`` refuses one: the channel has one writer, so anything else
means the run cannot be trusted.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .outcomes import Failure, TestOutcome
from .records import RecordError

_OUTCOMES: dict[str, TestOutcome] = {
    "passed": "passed",
    "xfailed": "passed",
    "xpassed": "xpassed",
    "skipped": "skipped",
    "failed": "failed",
    "error": "error",
}
_REPORTERS = ("unittest", "sympy")
_KINDS = ("hooked", "start", "result", "collect", "finish")


@dataclass(frozen=True)
class OwnRun:
    outcomes: dict[str, TestOutcome]  # of the ids asked for (every id, when none were)
    failures: dict[str, Failure]  # for each id whose outcome is failed or error
    collection_errors: tuple[tuple[str, str], ...]  # (test file, error text)
    hooked: frozenset[str]  # the reporters that were installed
    results: int  # result records of every test, asked for or not
    status: int | None  # what the runner script exited with; None: it never ended
    last_started: str | None  # the id of the last test that started


def read_own_records(data: bytes, wanted: Iterable[str] | None) -> OwnRun:
    """The outcomes of the ``wanted`` ids in the channel's ``data`` (None: of every test)."""
    allowed = None if wanted is None else set(wanted)
    outcomes: dict[str, TestOutcome] = {}
    failures: dict[str, Failure] = {}
    errors: list[tuple[str, str]] = []
    hooked: set[str] = set()
    results = 0
    status: int | None = None
    last: str | None = None
    for number, line in enumerate(data.splitlines(), 1):
        record = _record(line, number)
        kind = record["k"]
        if kind == "hooked":
            if record["n"] not in _REPORTERS:
                raise RecordError(f"record {number}: no reporter {record['n']!r}")
            hooked.add(record["n"])
        elif kind == "start":
            last = record["n"]
        elif kind == "collect":
            errors.append((record["n"], record["text"]))
        elif kind == "finish":
            if status is not None:
                raise RecordError(f"record {number}: a second end of the runner")
            status = record["status"]
        else:
            results += 1
            test, outcome = record["n"], _OUTCOMES[record["outcome"]]
            if allowed is not None and test not in allowed:
                continue
            outcomes[test] = outcome
            failures.pop(test, None)
            if outcome in ("failed", "error"):
                failures[test] = Failure("call", record.get("msg", ""), record["text"])
            elif outcome == "skipped" and record.get("msg"):
                failures[test] = Failure("call", record["msg"], "")
    return OwnRun(
        outcomes, failures, tuple(errors), frozenset(hooked), results, status, last
    )  # fmt: skip


def _record(line: bytes, number: int) -> dict[str, Any]:
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        raise RecordError(f"record {number} is not JSON") from None
    if not isinstance(record, dict) or record.get("k") not in _KINDS:
        raise RecordError(f"record {number} is not a record of a kind the reporters write")
    kind = record["k"]
    if kind == "finish":
        value = record.get("status")
        if not isinstance(value, int) or isinstance(value, bool):
            raise RecordError(f"record {number}: status is not a number")
        return record
    _string(record, "n", number)
    if kind == "collect":
        _string(record, "text", number)
    elif kind == "result":
        if record.get("outcome") not in _OUTCOMES:
            raise RecordError(f"record {number}: outcome {record.get('outcome')!r}")
        for key in ("msg", "text"):
            if key in record:
                _string(record, key, number)
        if record["outcome"] in ("failed", "error") and "text" not in record:
            raise RecordError(f"record {number}: a {record['outcome']} test without its text")
    return record


def _string(record: dict[str, Any], key: str, number: int) -> None:
    if not isinstance(record.get(key), str):
        raise RecordError(f"record {number}: {key} is not a string")
