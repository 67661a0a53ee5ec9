"""The store itself."""

import time


class MemStore:
    """Remember values under keys, optionally for a limited time."""

    def __init__(self, clock=time.monotonic):
        self._clock = clock
        self._items = {}

    def remember(self, key, value, ttl=None):
        """Store value under key; forget it after ttl seconds when ttl is given."""
        expires = None if ttl is None else self._clock() + ttl
        self._items[key] = (value, expires)

    def recall(self, key, default=None):
        """Return the value stored under key, or default when absent or expired."""
        if key not in self._items:
            return default
        value, expires = self._items[key]
        if expires is not None and self._clock() > expires:
            del self._items[key]
            return default
        return value

    def forget(self, key):
        """Drop key; forgetting an absent key is not an error."""
        self._items.pop(key, None)

    def __len__(self):
        return len(self._items)
