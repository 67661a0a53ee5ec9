"""The own runner's printed log held against its reporter's records: two independent signals of
one run of django's or sympy's runner (``logrun.py``).

The reporter's records (``own_records.py``) decide; the log, read by SWE-bench's parser for the
repository as SWE-bench reads it (``parsers.py``), is a second signal that whatever forges one
must forge consistently with the other. Product code that prints ``test_x ok`` (sympy) or
``test_x (m.C) ... ok`` (django) lines, from an ``atexit`` hook or anywhere else, changes the
log and not the records; code that writes records must also make the runner print what
agrees with them.

So for each graded id on which the log recorded a status, the two must say the same; a
disagreement (the log says passed, the reporter failed, or never reported the test) makes
the run unresolved (``Disagreement``, a ``run.Tampered``). Where the log recorded nothing
for an id, there is nothing to hold against: the log loses a status line a test's own output
splits, which the reporter does not. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .outcomes import TestOutcome
from .parsers import outcomes
from .run import Tampered

_SHOWN = 5


class Disagreement(Tampered):
    """The runner's log and its reporter disagree; ``tests`` holds the reporter's outcomes."""

    def __init__(self, message: str, tests: dict[str, TestOutcome]) -> None:
        super().__init__(message)
        self.tests = tests


def disagreements(
    reported: Mapping[str, TestOutcome], statuses: Mapping[str, str], ids: Iterable[str]
) -> list[str]:
    """Each id of ``ids`` whose status in the parsed log (``statuses``) is not what the
    reporter says (``reported``; an id it lacks: never reported), as "<id>: log <outcome>,
    reporter <outcome>"."""
    ids = list(ids)
    logged = outcomes(statuses, ids)
    found = []
    for test in ids:
        said, real = logged[test], reported.get(test, "missing")
        if said != "missing" and said != real:
            told = "never reported it" if real == "missing" else real
            found.append(f"{test}: log {said}, reporter {told}")
    return found


def check(
    reported: Mapping[str, TestOutcome], statuses: Mapping[str, str], ids: Iterable[str]
) -> None:
    """Raise ``Disagreement`` when the log and the reporter disagree on one of ``ids``."""
    found = disagreements(reported, statuses, ids)
    if found:
        more = f"; ... {len(found) - _SHOWN} more" if len(found) > _SHOWN else ""
        raise Disagreement(
            "the runner's log and its reporter disagree on " + "; ".join(found[:_SHOWN]) + more,
            dict(reported),
        )
