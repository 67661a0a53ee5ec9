"""The least-recently-used eviction order."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator


class LRUPolicy:
    """Tracks keys from least to most recently used.

    The policy only orders keys; the store decides when to evict and asks :meth:`victim`
    which key should go.
    """

    def __init__(self) -> None:
        self._order: OrderedDict[str, None] = OrderedDict()

    def touch(self, key: str) -> None:
        """Mark ``key`` as just used (adding it if it is new)."""
        self._order[key] = None
        self._order.move_to_end(key)

    def discard(self, key: str) -> None:
        """Stop tracking ``key``; discarding an unknown key is not an error."""
        self._order.pop(key, None)

    def victim(self) -> str:
        """The least recently used key. Raises ``LookupError`` when nothing is tracked."""
        try:
            return next(iter(self._order))
        except StopIteration:
            raise LookupError("no keys to evict") from None

    def clear(self) -> None:
        self._order.clear()

    def __len__(self) -> int:
        return len(self._order)

    def __iter__(self) -> Iterator[str]:
        """Keys from least to most recently used."""
        return iter(self._order)
