"""What a graded test's run came to, as grading and its rules (``infra.py``) speak of it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# "network": failed for want of a network (infra.needs_network), which grading sets.
# "missing": never reported: not collected, not run.
TestOutcome = Literal["passed", "failed", "error", "skipped", "xpassed", "network", "missing"]
When = Literal["setup", "call", "teardown"]


@dataclass(frozen=True)
class Failure:
    """What made a test fail or error, as its report tells it."""

    when: When
    message: str  # the crash: the exception's first line ("RuntimeError: no db")
    text: str  # the traceback (its end, where the final exception is)


def error_lines(text: str) -> list[str]:
    """The last block of a traceback's ``E`` lines (the final exception), without the "E"."""
    blocks: list[list[str]] = []
    previous = False
    for line in text.splitlines():
        is_e = line.startswith("E ") or line == "E"
        if is_e and not previous:
            blocks.append([])
        if is_e:
            blocks[-1].append(line[1:].strip())
        previous = is_e
    return blocks[-1] if blocks else []
