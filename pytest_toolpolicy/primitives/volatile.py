"""What a model is shown never carries what changes from run to run while the code does not.

A test run's duration, the memory addresses in an object's repr (``<Foo at 0x7f3a...>``) and
where this interpreter is installed (in tracebacks through pytest's own frames) differ between
two runs over the same workspace, or between two machines. If they reached the prompt, two runs over the
same state would send different requests: a record/replay cache would miss in CI, and token
figures would vary with the machine's load. The ledger and the trajectory keep the full capture;
only the text rendered for the model is masked.
"""

from __future__ import annotations

import re
import sys
from typing import Any

# pytest's summary line: "1 failed, 2 passed in 0.12s" or "... in 75.02s (0:01:15)".
_PYTEST_SUMMARY = re.compile(
    r"(\b(?:passed|failed|errors?|skipped|deselected|xfailed|xpassed|warnings?|no tests ran)\b"
    r"[^\n]*?) in \d+(?:\.\d+)?s(?: \(\d+:\d\d:\d\d\))?"
)
_ADDRESS = re.compile(r"\bat 0x[0-9a-fA-F]{6,}\b")
# Longest first, so a virtualenv inside a base prefix is replaced as a whole.
_PREFIXES = sorted(
    {sys.prefix, sys.exec_prefix, sys.base_prefix} - {"", "/"}, key=len, reverse=True
)
PREFIX_MARK = "<python-prefix>"
VOLATILE_KEYS = frozenset({"duration_s"})


def mask_volatile(text: str) -> str:
    for prefix in _PREFIXES:
        text = text.replace(prefix + "/", PREFIX_MARK + "/")
    return _ADDRESS.sub("at 0x…", _PYTEST_SUMMARY.sub(r"\1 in ?s", text))


def without_volatile(value: Any) -> Any:
    """``value`` with duration fields dropped and volatile text masked, at any depth."""
    if isinstance(value, dict):
        return {k: without_volatile(v) for k, v in value.items() if k not in VOLATILE_KEYS}
    if isinstance(value, list | tuple):
        return [without_volatile(v) for v in value]
    if isinstance(value, str):
        return mask_volatile(value)
    return value
