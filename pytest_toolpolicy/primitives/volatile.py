"""What a model is shown never carries what changes from run to run while the code does not.

A test run's duration, the memory addresses in an object's repr (``<Foo at 0x7f3a...>``),
where this interpreter is installed (in tracebacks through pytest's own frames) and where the
item's workspace is (pytest's ``rootdir:`` line: below the report's own directory, the machine's
temporary directory) differ between two runs over the same workspace, or between two machines. If they reached the prompt, two runs over the
same state would send different requests: a record/replay cache would miss in CI, and token
figures would vary with the machine's load. The ledger and the trajectory keep the full capture;
only the text rendered for the model is masked.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from typing import Any

# pytest's summary line: "1 failed, 2 passed in 0.12s" or "... in 75.02s (0:01:15)".
_DURATION = r" in \d+(?:\.\d+)?s(?: \(\d+:\d\d:\d\d\))?"
_PYTEST_SUMMARY = re.compile(
    r"(\b(?:passed|failed|errors?|skipped|deselected|xfailed|xpassed|warnings?|no tests ran)\b"
    r"[^\n]*?)" + _DURATION
)
_DURATION_RE = re.compile(_DURATION)
_ADDRESS = re.compile(r"\bat 0x[0-9a-fA-F]{6,}\b")
# Longest first, so a virtualenv inside a base prefix is replaced as a whole.
_PREFIXES = sorted(
    {sys.prefix, sys.exec_prefix, sys.base_prefix} - {"", "/"}, key=len, reverse=True
)
PREFIX_MARK = "<python-prefix>"
VOLATILE_KEYS = frozenset({"duration_s"})
# The workspaces this process opened, oldest first, and the same longest first (a path below
# one is shown relative to it; the tools run at the repository root, so the path still works;
# the root itself as ".").
_ROOTS: dict[str, re.Pattern[str]] = {}
_LONGEST_FIRST: list[tuple[str, re.Pattern[str]]] = []
MAX_ROOTS = 512  # a worker opens a few per item; the oldest are forgotten first


def mask_workspace(root: str | os.PathLike[str]) -> None:
    """Show ``root`` (an item's workspace) and the paths below it relative to it from now on."""
    text = os.fspath(root).rstrip("/")
    if len(text) < 2 or text in _ROOTS:
        return
    if len(_ROOTS) >= MAX_ROOTS:
        del _ROOTS[next(iter(_ROOTS))]
    _ROOTS[text] = re.compile(re.escape(text) + r"(?:/|(?![\w.-]))")
    _LONGEST_FIRST[:] = sorted(_ROOTS.items(), key=lambda known: len(known[0]), reverse=True)


def mask_volatile(text: str) -> str:
    for root, pattern in _LONGEST_FIRST:
        if root in text:
            text = pattern.sub(_relative, text)
    for prefix in _PREFIXES:
        text = text.replace(prefix + "/", PREFIX_MARK + "/")
    return _ADDRESS.sub("at 0x…", _mask_summaries(text))


def _relative(match: re.Match[str]) -> str:
    return "" if match.group().endswith("/") else "."


def _mask_summaries(text: str) -> str:
    """Each pytest summary's duration replaced by ``?`` (what ``_PYTEST_SUMMARY.sub`` gives,
    the summary kept and `` in ?s`` for its duration), in time linear in the text.

    The regex alone reads from each status word to the end of its line looking for a duration,
    so a line of words and no duration ("passed passed ...", which a test can print) cost the
    square of its length. A match ends at a duration on its word's line, and a duration holds no
    status word, so on each line nothing past the start of its last duration can start a match:
    the regex is run only from the start of each line that has one to the end of its last one.
    Each word read there finds its duration, and the match takes what it read."""
    out: list[str] = []
    done = 0
    for lo, hi in _duration_lines(text):
        for m in _PYTEST_SUMMARY.finditer(text, lo, hi):
            out += [text[done : m.end(1)], " in ?s"]
            done = m.end()
    return "".join([*out, text[done:]]) if out else text


def _duration_lines(text: str) -> Iterator[tuple[int, int]]:
    """For each line holding a duration: its start and the end of its last duration."""
    lo = hi = -1
    for duration in _DURATION_RE.finditer(text):
        if hi >= 0 and text.find("\n", hi, duration.start()) == -1:
            hi = duration.end()  # the same line
            continue
        if hi >= 0:
            yield lo, hi
        lo, hi = text.rfind("\n", max(hi, 0), duration.start()) + 1, duration.end()
    if hi >= 0:
        yield lo, hi


def without_volatile(value: Any) -> Any:
    """``value`` with duration fields dropped and volatile text masked, at any depth."""
    if isinstance(value, dict):
        return {k: without_volatile(v) for k, v in value.items() if k not in VOLATILE_KEYS}
    if isinstance(value, list | tuple):
        return [without_volatile(v) for v in value]
    if isinstance(value, str):
        return mask_volatile(value)
    return value
