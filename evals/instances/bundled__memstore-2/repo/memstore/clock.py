"""Clocks: where the store gets the current time from.

A clock is any zero-argument callable returning seconds as a float. The store only ever
compares and subtracts readings of one clock, so a monotonic clock is the right default.
"""

from __future__ import annotations

import time

system_clock = time.monotonic


class ManualClock:
    """A clock that only moves when told to; meant for tests and simulations.

    >>> clock = ManualClock(100.0)
    >>> clock.advance(5)
    >>> clock()
    105.0
    """

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)

    def __call__(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        """Move the clock forward by ``seconds`` (which must not be negative)."""
        if seconds < 0:
            raise ValueError(f"a clock cannot go backwards (advance by {seconds})")
        self._now += seconds

    def set(self, now: float) -> None:
        """Jump to the absolute reading ``now``."""
        self._now = float(now)
