"""Live progress of an A/B session, off the rows as they reach the controller and the items
that start and end there.

Pure: the hooks feed in rows, items and the clock, and write out the lines
(``progress_lines.py``); ``ticker.py`` asks on a clock whether a summary is due while items run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..decide.variants import item_of
from .progress_lines import item_line, summary_line

Level = Literal["items", "summary", "off"]
# A summary at least this often while items run (on a clock: ticker.py), and at every tenth of
# the items: a long real-model run still says it is alive, a short one says so at every tenth
# without flooding.
INTERVAL_S = 30.0
STEPS = 10
# How often the clock looks, while items run, for one waiting on another process's lock: a
# wait is said at once, not at the next summary.
WAIT_POLL_S = 1.0


def level_for(verbosity: int) -> Level:
    """``-v``: a line per item; default and ``-q``: the running summary; ``-qq``: nothing."""
    if verbosity >= 1:
        return "items"
    return "summary" if verbosity >= -1 else "off"


@dataclass
class Progress:
    """The rows so far (by item: a rerun item replaces its row), the items running (by node
    id, from their start until their row or their end), those of them waiting for another
    process's lock (by item id: what the wait says) and when the summary showed."""

    total: int | None = None  # the A/B items to run; None until collection says
    started: float = 0.0
    trial: bool = False  # name the trial in item lines (several trials ran)
    interval: float = INTERVAL_S
    rows: dict[str, dict[str, Any]] = field(default_factory=dict)
    running: set[str] = field(default_factory=set)
    waiting: dict[str, str] = field(default_factory=dict)
    shown_at: float = 0.0
    shown_done: int = 0

    def start(self, total: int, now: float) -> None:
        self.total, self.started, self.shown_at = total, now, now

    def begin(self, node: str) -> None:
        self.running.add(node)

    def end(self, node: str) -> None:
        self.running.discard(node)

    def tick_due(self, now: float) -> bool:
        """A summary on the clock: an interval since the last one while items run, whether
        or not one finished since."""
        return bool(self.running) and now - self.shown_at >= self.interval

    def next_tick(self, now: float) -> float:
        """Seconds until a summary on the clock can next be due."""
        return max(0.0, self.shown_at + self.interval - now)

    def wait(self, waits: Mapping[str, str]) -> list[str]:
        """Take the items waiting now (item id -> "waiting for ... held by pid N since T"):
        a line for each wait not said before."""
        new = [text for item, text in waits.items() if self.waiting.get(item) != text]
        self.waiting = dict(waits)
        return [f"toolpolicy: {text}" for text in new]

    def add(self, row: dict[str, Any]) -> str:
        """Take a row; its item line."""
        self.rows[item_of(row)] = row
        self.waiting.pop(item_of(row), None)
        return item_line(row, len(self.rows), self.total, trial=self.trial)

    def due(self, now: float, *, steps: bool) -> bool:
        """A summary mid-run: after ``INTERVAL_S``, or (``steps``) at another tenth of the
        items. The last item's waits for ``summary(final=True)`` at the loop's end."""
        done = len(self.rows)
        if done == self.shown_done or (self.total and done >= self.total):
            return False
        if now - self.shown_at >= self.interval:
            return True
        if not steps or not self.total:
            return False
        step = max(1, math.ceil(self.total / STEPS))
        return done // step > self.shown_done // step

    def summary(self, now: float, *, final: bool = False) -> str:
        self.shown_at, self.shown_done = now, len(self.rows)
        rows, running = list(self.rows.values()), len(self.running)
        return summary_line(
            rows, self.total, now - self.started, final=final, running=running,
            waiting=list(self.waiting.values()),
        )  # fmt: skip
