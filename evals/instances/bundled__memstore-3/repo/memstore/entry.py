"""The stored record for one key."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class Entry:
    """A value and the clock reading at which it expires (``None``: never)."""

    value: Any
    expires_at: float | None = None

    def is_expired(self, now: float) -> bool:
        """Whether the entry is dead at clock reading ``now``; an entry dies at its expiry."""
        return self.expires_at is not None and now >= self.expires_at

    def remaining(self, now: float) -> float | None:
        """Seconds left to live at ``now`` (never negative), or ``None`` for no expiry."""
        if self.expires_at is None:
            return None
        return max(0.0, self.expires_at - now)
