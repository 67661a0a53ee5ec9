"""What the independent signals of one pytest grading run say against each other.

The grading plugin's records are the verdict's source, but they are written from inside the
process the tests run in, where product code runs too: code that finds the plugin's writer (or
the channel's descriptor) can write records of its own. So a finished run is held against what
such code would also have to forge, each a different thing:

- the process's exit status, which the sandbox sees from outside, against the status pytest
  returned to the launcher and the status the session ended with (code that ends the process
  itself, from an import or an ``atexit`` hook, disagrees with one of them);
- pytest's rule for that status: 1 exactly when some report failed (the failures and errors
  the plugin counted over every test, kept or not);
- pytest's own summary line in the output (``1 failed, 2 passed in 0.12s``), printed by its
  terminal reporter from its own tally of the same reports: its failed, error and passed
  counts against the plugin's (where the repository's configuration silences that line,
  ``-qq`` or no terminal reporter, this signal is not there to compare).

Each disagreement is a sentence; any one makes the run unresolved (``run.py``). Pure.
"""

from __future__ import annotations

import re

from .records import TestRun

_SUMMARY = re.compile(
    r"^=*\s*(?P<counts>(?:\d+ [a-z]+(?:, )?)+|no tests ran)"
    r"(?: in [\d.]+ ?s(?:econds)?\b.*?)?\s*=*\s*$"
)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_COMPARED = ("failed", "error", "passed")


def summary_counts(output: str) -> dict[str, int] | None:
    """The counts of pytest's last summary line in ``output`` ("errors" read as "error",
    "warnings" as "warning"); None when there is none."""
    for line in reversed(output.splitlines()[-50:]):
        found = _SUMMARY.match(_ANSI.sub("", line).strip())
        if found and " in " in line:
            counts: dict[str, int] = {}
            for number, word in re.findall(r"(\d+) ([a-z]+)", found.group("counts")):
                key = word[:-1] if word in ("errors", "warnings") else word
                counts[key] = counts.get(key, 0) + int(number)
            return counts
    return None


def disagreements(run: TestRun, exit_code: int, output: str, summary: bool = True) -> list[str]:
    """What the finished run's signals say against each other (see the module). ``summary``:
    pytest prints its summary line in this run (not where the repository's own configuration
    makes it quieter still: ``guard_config.quiet``)."""
    if not run.finished:
        return []
    said = []
    if run.exited is None:
        said.append("the session's end was reported but pytest never returned")
    elif run.exited != exit_code:
        said.append(f"pytest returned {run.exited} but the process exited {exit_code}")
    if run.status is not None and run.exited is not None and run.status != run.exited:
        said.append(f"the session ended with status {run.status} but pytest returned {run.exited}")
    counts = run.counts or {}
    failing = counts.get("failed", 0) + counts.get("error", 0)
    if exit_code == 0 and failing:
        said.append(f"the process exited 0 with {failing} failure(s) or error(s) reported")
    elif exit_code == 1 and not failing:
        said.append("the process exited 1 (tests failed) with no failure or error reported")
    if summary:
        printed = summary_counts(output)
        if printed is None:
            said.append("pytest's summary line is missing from its output")
        else:
            differ = [
                f"{key} {counts.get(key, 0)} reported, {printed.get(key, 0)} in pytest's summary"
                for key in _COMPARED
                if counts.get(key, 0) != printed.get(key, 0)
            ]
            said += differ
    return said
