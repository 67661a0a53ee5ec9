"""SWE-bench's log parsers, read as its harness reads them: a test run's log to
``{test id: status}``, and that to this project's per-test outcomes.

The seven parsers SWE-bench's specs name (``swebench/harness/log_parsers/python.py``, 4.x):

- ``pytest``: each line that starts with a status word (``STATUSES``) records its second
  whitespace token as the test, its first as the status (FAILED lines have " - " replaced by
  " " first). ``pytest_options`` shortens a bracketed path (``testids.shorten_option``);
  ``matplotlib`` renames MouseButton ids first; ``pytest_v2`` strips colour codes and control
  characters first, and also reads a line that *ends* with a status word as ``<test>
  <status> ...`` (pytest 3's verbose lines: its ``-rA`` prints no PASSED summary).
- ``seaborn``: FAILED and PASSED summary lines only (and verbose ``<test> PASSED`` lines):
  ERROR, SKIPPED and XFAIL are never recorded.
- ``django``: ``<description> ... ok|FAIL|ERROR|skipped ...`` lines of ``runtests.py
  --verbosity 2``, ``FAIL:``/``ERROR:`` headers (which record only the method name), an "ok"
  line closing the last ``... `` line, and three patterns over the whole log for results
  separated from their test by the runner's own output (``django_log.py``).
- ``sympy``: ``test_x ok|F|E`` lines of ``bin/test --verbose``, and a ``path.py:name``
  FAILED for each underlined failure header.

Which reader a parser is, and what its lines lose before they are read, is its record's
(``envs/runners.py``: ``log``, ``cleans``, ``short_paths``, ``verbose_status``). Statuses are
SWE-bench's words as its parser records them; the pytest parsers record whatever
token starts the line ("PASSED", or "blue]" for pytest 3's ``t.py::test[dark blue] PASSED``).

Linear in the log's length, unlike SWE-bench's sympy and django regexes (which backtrack over
the whole log); tests/grading/test_parsers.py checks them against a transcription of
SWE-bench's code on generated logs. Where SWE-bench's code raises (``IndexError`` on a lone
"FAILED", "FAIL:" or " PASSED " line), the line is passed over.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from ..envs.runners import runner_for, runner_names
from .django_log import parse_django
from .outcomes import TestOutcome
from .testids import CLEANS, shorten_option

STATUSES = ("FAILED", "PASSED", "SKIPPED", "ERROR", "XFAIL")
# SWE-bench's grading: PASSED and XFAIL pass, FAILED and ERROR fail. What it does with
# SKIPPED changed between releases (4.x counts it neither way, later ones fail a skipped
# FAIL_TO_PASS test and keep a skipped PASS_TO_PASS one): here it is "skipped", for grading
# to decide. An id never recorded, or recorded with any other word, is "missing".
_OUTCOMES: dict[str, TestOutcome] = {
    "PASSED": "passed",
    "XFAIL": "passed",
    "FAILED": "failed",
    "ERROR": "error",
    "SKIPPED": "skipped",
}


def parse_log(log: str, parser: str) -> dict[str, str]:
    """``{test id: status}`` as SWE-bench's ``parser`` reads ``log`` (the reader its record
    names, ``envs/runners.py``). ``ValueError`` for a parser that is not one of
    ``LOG_PARSERS``."""
    return READERS[runner_for(parser).log](log, parser)


def outcomes(statuses: Mapping[str, str], ids: Iterable[str]) -> dict[str, TestOutcome]:
    """The outcome of each listed id in a parser's ``statuses`` (XFAIL passes, as in
    SWE-bench's grading)."""
    return {i: _OUTCOMES.get(statuses.get(i, ""), "missing") for i in ids}


def parse_pytest_family(log: str, parser: str) -> dict[str, str]:
    """SWE-bench's ``pytest``, ``pytest_options``, ``pytest_v2`` and ``matplotlib`` parsers:
    what differs between them is their record's (``cleans``, ``short_paths``,
    ``verbose_status``)."""
    runner = runner_for(parser)
    cleans = [CLEANS[c] for c in runner.cleans]
    found: dict[str, str] = {}
    for line in log.split("\n"):
        for clean in cleans:
            line = clean(line)
        if line.startswith(STATUSES):
            if line.startswith("FAILED"):
                line = line.replace(" - ", " ")
            tokens = line.split()
            if len(tokens) > 1:
                test = shorten_option(tokens[1]) if runner.short_paths else tokens[1]
                found[test] = tokens[0]
        elif runner.verbose_status and line.endswith(STATUSES):
            tokens = line.split()
            if len(tokens) > 1:
                found[tokens[0]] = tokens[1]  # the second token, whatever the last one is
    return found


def parse_seaborn(log: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in log.split("\n"):
        if line.startswith("FAILED"):
            tokens = line.split()
            if len(tokens) > 1:
                found[tokens[1]] = "FAILED"
        elif " PASSED " in line:  # a verbose line; a summary line with this inside is lost
            tokens = line.split()
            if len(tokens) > 1 and tokens[1] == "PASSED":
                found[tokens[0]] = "PASSED"
        elif line.startswith("PASSED"):
            tokens = line.split()
            if len(tokens) > 1:
                found[tokens[1]] = "PASSED"
    return found


def parse_sympy(log: str) -> dict[str, str]:
    lines = log.split("\n")
    found: dict[str, str] = {}
    for line in lines:
        # SWE-bench's ``re.findall(r"(_*) (.*)\.py:(.*) (_*)", log)``, one line at a time:
        # from after the line's first space to its last ".py:" that a later space follows,
        # then to the last space. No line holds two matches: none has a space left after one.
        first, last = line.find(" "), line.rfind(" ")
        if first >= 0:
            dot = line.rfind(".py:", first + 1, last)
            if dot >= 0:
                found[f"{line[first + 1 : dot]}.py:{line[dot + 4 : last]}"] = "FAILED"
    for line in lines:
        line = line.strip()
        if line.startswith("test_"):
            for suffix, status in ((" E", "ERROR"), (" F", "FAILED"), (" ok", "PASSED")):
                if line.endswith(suffix):
                    found[line.split()[0]] = status
    return found


# A record's ``log`` -> the reader: (the log, the parser's name) -> {test id: status}.
READERS: dict[str, Callable[[str, str], dict[str, str]]] = {
    "pytest": parse_pytest_family,
    "seaborn": lambda log, _: parse_seaborn(log),
    "django": lambda log, _: parse_django(log),
    "sympy": lambda log, _: parse_sympy(log),
}
LOG_PARSERS = runner_names()
