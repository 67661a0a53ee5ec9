"""SWE-bench's ``django`` log parser: what ``tests/runtests.py --verbosity 2`` printed, read as
SWE-bench reads it, in time linear in the log's length.

unittest's verbose line is ``<description> ... <result>``; the description is ``str(test)``,
``test_name (module.Class)`` (``(module.Class.test_name)`` from Python 3.11), or, when the
test has a docstring, its first line, printed on a line of its own after ``str(test)``: the
id SWE-bench records is then the docstring's first line. Line by line (stripped):

- "--version is equivalent to version" anywhere records that text as PASSED;
- ``<d> ... ok`` (or `` ... OK``, `` ...  OK``) records ``<d>`` PASSED, ``<d> ... skipped
  ...`` SKIPPED, ``<d> ... FAIL`` FAILED, ``<d> ... ERROR`` ERROR; a line starting "ok"
  records PASSED for the text before " ... " on the last line that had one (a result the
  test's own output pushed to a line of its own);
- ``FAIL: <words>`` and ``ERROR: <words>`` record the first word alone (the method name), a
  key no listed ``name (module.Class)`` id equals;
- SWE-bench's fix for django__django-7188: a pass line starting "Applying
  sites.0002_alter_domain_unique...test_no_migrations" is read from after its first "...".

Then three patterns over the whole log record PASSED for a test whose "... ok" the runner's
own output split: ``<d> ... Testing against Django installed in <any text> silenced).`` /
``ok``, ``<d> ... Internal Server Error: /<path>/`` / ``ok``, and ``<d> ... System check
identified no issues (0 silenced)`` / ``ok`` (that last one without the full stop django
prints, so it never matches its real output). SWE-bench runs them as regexes whose lazy
``(?s:.*?)`` rescans the rest of the log from every line; here each header is tried once.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_PASS = (" ... ok", " ... OK", " ...  OK")
_SITES = "Applying sites.0002_alter_domain_unique...test_no_migrations"
_VERSION = "--version is equivalent to version"
# (the header of a failure's traceback, the end of its verbose line, the status)
_FAILURES = (("FAIL:", " ... FAIL", "FAILED"), ("ERROR:", " ... ERROR", "ERROR"))
# What follows a pattern's ``^(.*?)``, up to where its own part begins; ``\s`` as in
# SWE-bench's patterns: any whitespace, a newline too.
_TESTING = re.compile(r"\s\.\.\.\sTesting against Django installed in ")
_TESTING_END = re.compile(r" silenced\)\.\nok(?=\n|\Z)")
_SERVER = re.compile(r"\s\.\.\.\sInternal Server Error: /")
_CHECK = re.compile(r"\s\.\.\.\sSystem check identified no issues \(0 silenced\)\nok(?=\n|\Z)")


def parse_django(log: str) -> dict[str, str]:
    found: dict[str, str] = {}
    previous: str | None = None
    for line in log.split("\n"):
        line = line.strip()
        if _VERSION in line:
            found[_VERSION] = "PASSED"
        if " ... " in line:
            previous = line.split(" ... ", 1)[0]
        for suffix in _PASS:
            if line.endswith(suffix):
                if line.startswith(_SITES):
                    line = line.split("...", 1)[-1].strip()
                found[line.rsplit(suffix, 1)[0]] = "PASSED"
                break
        if " ... skipped" in line:
            found[line.split(" ... skipped", 1)[0]] = "SKIPPED"
        for head, tail, status in _FAILURES:
            if line.endswith(tail):
                found[line.split(tail, 1)[0]] = status
            words = line.split() if line.startswith(head) else []
            if len(words) > 1:
                found[words[1]] = status
        if line.startswith("ok") and previous is not None:
            found[previous] = "PASSED"
    for test in (*_testing_passes(log), *_server_passes(log), *_check_passes(log)):
        found[test] = "PASSED"
    return found


def _headed(log: str, heads: list[re.Match[str]]) -> Iterator[tuple[int, list[re.Match[str]]]]:
    """Each line start, with the headers (in order) that begin on that line or at its newline:
    where a pattern's ``^(.*?)`` can reach. Each header belongs to one line."""
    index = start = 0
    for line in log.split("\n"):
        end = start + len(line)  # where its newline is
        first = index
        while index < len(heads) and heads[index].start() <= end:
            index += 1
        yield start, heads[first:index]
        start = end + 1


def _testing_passes(log: str) -> Iterator[str]:
    heads = list(_TESTING.finditer(log))
    ends = [m.end() for m in _TESTING_END.finditer(log)]
    resume = 0  # finditer's matches do not overlap: the next one starts after the last's end
    index = 0
    for start, on_line in _headed(log, heads):
        if start < resume or not on_line:
            continue
        # The lazy ``(?s:.*?)`` stops at the first ending after the first header; with none
        # there, no later header has one either.
        while index < len(ends) and ends[index] - len(" silenced).\nok") < on_line[0].end():
            index += 1
        if index == len(ends):
            return
        resume = ends[index]
        yield log[start : on_line[0].start()]


def _server_passes(log: str) -> Iterator[str]:
    resume = newline = 0
    for start, on_line in _headed(log, list(_SERVER.finditer(log))):
        if start < resume:
            continue
        for head in on_line:
            # ``(.*)\/\nok$``: the line the header ends on ends in "/", the next one is "ok".
            if newline < head.end():  # headers come in order: one scan for each newline
                newline = log.find("\n", head.end()) % (len(log) + 1)
            if newline > head.end() and log[newline - 1] == "/" and _ok_line(log, newline + 1):
                resume = newline + 3
                yield log[start : head.start()]
                break


def _check_passes(log: str) -> Iterator[str]:
    resume = 0
    for start, on_line in _headed(log, list(_CHECK.finditer(log))):
        if start >= resume and on_line:
            resume = on_line[0].end()
            yield log[start : on_line[0].start()]


def _ok_line(log: str, start: int) -> bool:
    return log.startswith("ok", start) and (start + 2 == len(log) or log[start + 2] == "\n")
