"""Per-test outcomes from the records the grading plugin sent over the sandbox's side channel
(``sandbox_plugin.py``), keyed by the listed ids that were asked for.

Each record is one JSON line. A report record is one phase of one kept test: a failed setup is
an error, a failed call a failure, a failed teardown an error, a skip a skip (an expected
failure counts as passed, as SWE-bench's parser has it), a passed call a pass (a non-strict
xfail that passed is "xpassed": SWE-bench records no XPASS line, so it counts as not run).

When several tests map to one listed id (``t.py::test[a`` is the SWE-bench id of every
``t.py::test[a ...]``) or a test has several phases that said something (a passed call and a
teardown error), the outcome is the one SWE-bench would record: its parser keeps the last
status line, and ``pytest -rA`` prints the summary grouped by status in the order passed,
skipped, xfailed, xpassed, error, failed (``getreportopt``'s "PpsxXEf" in terminal.py). Skipped
and xpassed lines record no id (a skip is folded into ``SKIPPED [n] file:line``). So failed
beats error beats passed, and a skip or an xpass stands only when nothing else was said.

Pure functions over bytes. A line that is not a record of the expected shape is refused
(``RecordError``): the channel has one writer, the plugin, so anything else means the run
cannot be trusted. So is a stream the plugin could not have written: a report of a test that
never started, a second end of the session or of the process.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .outcomes import Failure, TestOutcome, When, error_lines

_RANK = {"skipped": 0, "xpassed": 1, "passed": 2, "error": 3, "failed": 4}
_WHEN = ("setup", "call", "teardown")


class RecordError(ValueError):
    """The channel held something the plugin does not write; the message says what."""


@dataclass(frozen=True)
class TestRun:
    outcomes: dict[str, TestOutcome]
    # (test file path relative to the workspace, error text) for each module that failed to
    # collect
    collection_errors: tuple[tuple[str, str], ...]
    # for each id whose outcome is failed or error: the failure that decided it
    failures: dict[str, Failure]
    collected: int | None  # tests the plugin kept; None: collection never finished
    finished: bool  # the session reached its end
    last_started: str | None  # the node id of the last test that started
    # The session's end as pytest gave it: its exit status, and how many reports of every
    # test (kept or not) fell in each category pytest's summary counts; None: no end.
    status: int | None = None
    counts: dict[str, int] | None = None
    exited: int | None = None  # the status the launcher saw pytest return; None: never


def read_records(data: bytes, wanted: Iterable[str] | None) -> TestRun:
    """The outcomes of the ``wanted`` ids in the channel's ``data`` (None: of every id it
    reports, as a run that asked for every test collected)."""
    allowed = None if wanted is None else set(wanted)
    decided: dict[str, tuple[TestOutcome, Failure | None]] = {}
    errors: list[tuple[str, str]] = []
    collected: int | None = None
    finished = False
    last: str | None = None
    started: set[str] = set()
    status: int | None = None
    counts: dict[str, int] | None = None
    exited: int | None = None
    for number, line in enumerate(data.splitlines(), 1):
        record = _record(line, number)
        kind = record.get("k")
        if exited is not None:
            raise RecordError(f"record {number}: {kind!r} after the process's end")
        if kind == "start":
            last = _text(record, "n", number)
            started.add(last)
        elif kind == "collected":
            collected = _count(record, number)
        elif kind == "finish":
            if finished:
                raise RecordError(f"record {number}: a second end of the session")
            finished = True
            status = _count(record, number, "status")
            counts = _counts(record, number)
        elif kind == "exit":
            exited = _count(record, number, "status")
        elif kind == "collect":
            errors.append((_text(record, "n", number), _text(record, "text", number)))
        elif kind == "report":
            outcome, failure = _outcome(record, number)
            ids = record.get("ids")
            if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
                raise RecordError(f"record {number}: ids is not a list of strings")
            if allowed is not None and (other := [i for i in ids if i not in allowed]):
                raise RecordError(f"record {number}: {other[0]!r} was not asked for")
            if _text(record, "n", number) not in started:
                raise RecordError(f"record {number}: a report of a test that never started")
            for nodeid in ids:
                # ">=": within one status group the later test's line is the later one.
                if nodeid not in decided or _RANK[outcome] >= _RANK[decided[nodeid][0]]:
                    decided[nodeid] = (outcome, failure)
        else:
            raise RecordError(f"record {number}: unknown kind {kind!r}")
    outcomes = {nodeid: outcome for nodeid, (outcome, _) in decided.items()}
    failures = {nodeid: failure for nodeid, (_, failure) in decided.items() if failure}
    return TestRun(
        outcomes, tuple(errors), failures, collected, finished, last, status, counts, exited
    )


def _record(line: bytes, number: int) -> dict[str, Any]:
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        raise RecordError(f"record {number} is not JSON") from None
    if not isinstance(record, dict):
        raise RecordError(f"record {number} is not an object")
    return record


def _text(record: dict[str, Any], key: str, number: int) -> str:
    value = record.get(key)
    if not isinstance(value, str):
        raise RecordError(f"record {number}: {key} is not a string")
    return value


def _count(record: dict[str, Any], number: int, key: str = "n") -> int:
    value = record.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise RecordError(f"record {number}: {key} is not a count")
    return value


def _counts(record: dict[str, Any], number: int) -> dict[str, int]:
    value = record.get("counts")
    if not isinstance(value, dict):
        raise RecordError(f"record {number}: counts is not an object")
    return {str(k): _count(value, number, k) for k in value}


def _outcome(record: dict[str, Any], number: int) -> tuple[TestOutcome, Failure | None]:
    when, outcome = record.get("when"), record.get("outcome")
    if when not in _WHEN or outcome not in ("passed", "failed", "skipped"):
        raise RecordError(f"record {number}: phase {when!r} with outcome {outcome!r}")
    xfail = record.get("xfail") is True
    if outcome == "skipped":  # SWE-bench counts an expected failure as passing
        if xfail:
            return "passed", None
        why = record.get("msg")
        skip_phase: When = when  # checked against _WHEN above
        return "skipped", (
            Failure(skip_phase, why[:500], "") if isinstance(why, str) and why else None
        )
    if outcome == "passed":
        return ("xpassed" if xfail else "passed"), None
    text = _text(record, "text", number)
    message = record.get("msg") if isinstance(record.get("msg"), str) else ""
    phase: When = when  # checked against _WHEN above
    if not message:
        lines = error_lines(text)
        message = lines[0] if lines else ""
    failure = Failure(phase, str(message).strip()[:500], text)
    return ("failed" if phase == "call" else "error"), failure
