"""Test ids as SWE-bench spells them, so that a listed id finds the test it names.

SWE-bench does not read junit. Its harness runs ``pytest -rA <test files>`` from the repository
root and parses the short test summary (``swebench/harness/log_parsers/python.py``, whose
semantics ``parsers.py`` carries): each line that starts with a status (PASSED, FAILED,
SKIPPED, ERROR, XFAIL) is split on whitespace and its second token is the test id (FAILED
lines first have " - ", the separator before the crash message, replaced by " "; that never
changes the second token of a summary line). The summary prints each node id relative to the
invocation directory. So an instance's listed ids are node ids except that:

- an id is cut at its first whitespace: ``t.py::test[a b]`` is listed as ``t.py::test[a``
  (every parser; ``seaborn``'s reads its PASSED and FAILED lines alike);
- ``pytest_options`` (psf/requests, pylint, pydicom) rewrites a bracketed part that starts
  with "/" (not "//", and without "*") to "/" and its last path component, so ids do not
  depend on a machine's temporary paths: ``t.py::test[/tmp/x/y.txt]`` -> ``t.py::test[/y.txt]``;
- ``pytest_v2`` (astropy, scikit-learn, sphinx) first strips terminal colour codes (``[31m``)
  and control characters from the line, ids included;
- ``matplotlib`` first replaces "MouseButton.LEFT" by "1" and "MouseButton.RIGHT" by "3" in
  the line: the parameter ids of matplotlib's ``MouseButton`` (an ``IntEnum``) are its
  ``str()``, "MouseButton.LEFT" before Python 3.11 and "1" since, and the listed ids use "1".

Some listed ids name no test at all: a skipped test is folded into ``SKIPPED [2] t.py:10:
reason`` (token "[2]"), and a captured inner pytest run with wrapped progress lines yields
``PASSED [100%]`` (pytest-dev__pytest-5262 and -7521 list "[100%]" in PASS_TO_PASS). Grading
leaves such ids out of the verdict and says so (see grade.py), by ``path_of`` naming no file.

Which of these a parser applies is its record's word (``envs/runners.py``: ``cleans``,
``short_paths``). Pure functions. ``sandbox_plugin.py`` runs inside the sandbox, where this
package is not importable, and carries its own copy of ``swebench_id`` for the shipped parsers;
tests/grading/test_testids.py asserts the two agree.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..envs.runners import runner_for, runner_names

# The parsers that read pytest's output (django's and sympy's read their own runners').
PYTEST_PARSERS = runner_names("plugin")
_COLOUR = re.compile(r"\[(\d+)m")
_CONTROL = str.maketrans("", "", "".join(chr(c) for c in range(1, 32)))
_MOUSE_BUTTONS = (("MouseButton.LEFT", "1"), ("MouseButton.RIGHT", "3"))


def swebench_id(nodeid: str, parser: str = "pytest") -> str:
    """The id SWE-bench's log ``parser`` records for the test whose cwd-relative node id is
    ``nodeid`` ("" for an id that is all whitespace). ``ValueError`` for a parser that does
    not read pytest's output (django's, sympy's)."""
    if not runner_for(parser).plugin:
        raise ValueError(f"log parser {parser!r} is not one of {', '.join(PYTEST_PARSERS)}")
    tokens = clean_line(nodeid, parser).split()
    test = tokens[0] if tokens else ""
    return shorten_option(test) if runner_for(parser).short_paths else test


def clean_line(line: str, parser: str) -> str:
    """A line of output as ``parser`` reads it before looking for a status: what its record's
    ``cleans`` take off (colour codes and control characters, ``pytest_v2``; MouseButton ids
    renamed, ``matplotlib``)."""
    for clean in runner_for(parser).cleans:
        line = CLEANS[clean](line)
    return line


def _colours(line: str) -> str:
    return _COLOUR.sub("", line).translate(_CONTROL)


def _mouse_buttons(line: str) -> str:
    for name, value in _MOUSE_BUTTONS:
        line = line.replace(name, value)
    return line


CLEANS: dict[str, Callable[[str], str]] = {"colours": _colours, "mouse_buttons": _mouse_buttons}


def shorten_option(test: str) -> str:
    """``pytest_options``' reading of a test id: a bracketed path shortened to its last part.

    What SWE-bench's ``(.*?)\\[(.*)\\]`` finds, without its regex (cubic on many "["): the
    text before the first "[" and between it and the last "]"."""
    first, last = test.find("["), test.rfind("]")
    if 0 <= first < last:
        main, option = test[:first], test[first + 1 : last]
        if option.startswith("/") and not option.startswith("//") and "*" not in option:
            option = "/" + option.split("/")[-1]
        test = f"{main}[{option}]"
    return test


def path_of(test_id: str) -> str:
    """The path part of a listed id: what comes before the first "::"."""
    return test_id.partition("::")[0]
