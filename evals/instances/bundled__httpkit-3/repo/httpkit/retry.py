"""Retry policies: when to try again, and how long to wait first."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime

DEFAULT_RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with an optional cap, jitter and attempt limit.

    The delay before retry number ``n`` (``n`` >= 1) is
    ``base_delay * multiplier ** (n - 1)``, capped at ``max_delay``. ``jitter`` is the
    fraction of that delay that is randomized: with ``jitter=0.2`` the delay is drawn
    from ``[0.8 * d, d]``. ``max_attempts=None`` retries forever.
    """

    max_attempts: int | None = 5
    base_delay: float = 0.5
    multiplier: float = 2.0
    max_delay: float = 30.0
    jitter: float = 0.0
    retry_statuses: frozenset[int] = DEFAULT_RETRY_STATUSES

    def __post_init__(self) -> None:
        if self.max_attempts is not None and self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1 (or None for no limit)")
        if self.base_delay < 0 or self.max_delay < 0:
            raise ValueError("delays must not be negative")
        if self.multiplier < 1:
            raise ValueError("multiplier must be at least 1")
        if not 0 <= self.jitter <= 1:
            raise ValueError("jitter must be between 0 and 1")

    def should_retry(self, attempt: int, status: int | None = None) -> bool:
        """Whether to retry after ``attempt`` attempts have been made.

        ``status`` is the HTTP status of the last response, or ``None`` when the
        attempt failed without one (a connection error), which is always retryable.
        """
        if self.max_attempts is not None and attempt >= self.max_attempts:
            return False
        return status is None or status in self.retry_statuses

    def delay_for(self, retry: int, rng: random.Random | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (1 for the first retry)."""
        if retry < 1:
            raise ValueError("retry numbers start at 1")
        try:
            delay = min(self.max_delay, self.base_delay * self.multiplier ** (retry - 1))
        except OverflowError:
            # Retry-forever loops reach retry numbers whose power no float can hold;
            # the cap has long been reached by then.
            delay = self.max_delay
        if self.jitter:
            delay -= delay * self.jitter * (rng or random).random()
        return delay

    def delays(self, rng: random.Random | None = None) -> Iterator[float]:
        """The successive delays this policy allows (endless if it never gives up)."""
        retry = 1
        while self.max_attempts is None or retry < self.max_attempts:
            yield self.delay_for(retry, rng)
            retry += 1


def parse_retry_after(value: str, now: datetime | None = None) -> float | None:
    """Seconds to wait according to a ``Retry-After`` header, or ``None`` if invalid.

    The header is either a number of seconds or an HTTP date; a date in the past
    gives ``0.0``.
    """
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    now = now or datetime.now(timezone.utc)
    return max(0.0, (when - now).total_seconds())
