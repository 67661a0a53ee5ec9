"""memstore: a small in-memory key/value store.

Values are remembered under string keys, optionally for a limited time (TTL), in separate
namespaces. A store with a capacity evicts its least recently used key to make room, can be
saved to and restored from JSON, and reports changes through event hooks.

>>> store = MemStore(max_items=2)
>>> store.remember("greeting", "hello", ttl=60)
>>> store.recall("greeting")
'hello'
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from . import snapshot as _snapshot
from .clock import ManualClock, system_clock
from .entry import Entry
from .eviction import LRUPolicy
from .hooks import Event, HookRegistry
from .namespaces import DEFAULT_NAMESPACE, Namespace, qualify, split
from .snapshot import SnapshotError

__version__ = "0.4.2"
__all__ = ["Event", "ManualClock", "MemStore", "Namespace", "SnapshotError", "__version__"]


class MemStore:
    """Remember values under keys, optionally for a limited time.

    Args:
        max_items: the capacity. When the store is full, remembering a *new* key first drops
            expired keys and, if that frees nothing, evicts the least recently used key.
            ``None`` (the default) means unbounded.
        clock: a zero-argument callable returning seconds; defaults to ``time.monotonic``.
    """

    def __init__(
        self, max_items: int | None = None, clock: Callable[[], float] = system_clock
    ) -> None:
        if max_items is not None and max_items < 1:
            raise ValueError(f"max_items must be at least 1, got {max_items}")
        self.max_items = max_items
        self.hooks = HookRegistry()
        self.hits = 0
        self.misses = 0
        self._clock = clock
        self._entries: dict[str, Entry] = {}
        self._lru = LRUPolicy()

    # -- the core API ------------------------------------------------------------------

    def remember(
        self, key: str, value: Any, ttl: float | None = None, *, namespace: str = DEFAULT_NAMESPACE
    ) -> None:
        """Store ``value`` under ``key``, to be forgotten ``ttl`` seconds from now if given.

        Remembering a key that is already stored replaces its value and TTL and makes it the
        most recently used key; it never evicts anything.
        """
        if ttl is not None and ttl <= 0:
            raise ValueError(f"ttl must be positive, got {ttl}")
        qkey = qualify(namespace, key)
        if qkey not in self._entries:
            self._make_room()
        expires_at = None if ttl is None else self._clock() + ttl
        self._entries[qkey] = Entry(value, expires_at)
        self._lru.touch(qkey)
        self._emit("set", qkey, value)

    def recall(self, key: str, default: Any = None, *, namespace: str = DEFAULT_NAMESPACE) -> Any:
        """The value stored under ``key``, or ``default`` when it is absent or expired.

        A successful recall makes ``key`` the most recently used key.
        """
        qkey = qualify(namespace, key)
        entry = self._live_entry(qkey)
        if entry is None:
            self.misses += 1
            return default
        self.hits += 1
        self._lru.touch(qkey)
        return entry.value

    def forget(self, key: str, *, namespace: str = DEFAULT_NAMESPACE) -> bool:
        """Drop ``key``; returns whether a live value was dropped (absent keys are fine)."""
        qkey = qualify(namespace, key)
        entry = self._live_entry(qkey)
        if entry is None:
            return False
        self._remove(qkey)
        self._emit("forget", qkey, entry.value)
        return True

    def contains(self, key: str, *, namespace: str = DEFAULT_NAMESPACE) -> bool:
        """Whether ``key`` holds a live value (without counting as a use of it)."""
        return self._live_entry(qualify(namespace, key)) is not None

    def keys(self, *, namespace: str = DEFAULT_NAMESPACE) -> list[str]:
        """The live keys of ``namespace``, oldest first."""
        now = self._clock()
        found = []
        for qkey, entry in self._entries.items():
            owner, key = split(qkey)
            if owner == namespace and not entry.is_expired(now):
                found.append(key)
        return found

    def namespace(self, name: str) -> Namespace:
        """A view of the namespace ``name``."""
        return Namespace(self, name)

    def clear(self, *, namespace: str | None = None) -> int:
        """Forget every key (of ``namespace`` only, when given); returns how many."""
        doomed = [
            qkey for qkey in self._entries if namespace is None or split(qkey)[0] == namespace
        ]
        for qkey in doomed:
            self._remove(qkey)
        return len(doomed)

    def purge_expired(self) -> int:
        """Drop every expired key now; returns how many were dropped."""
        now = self._clock()
        expired = [qkey for qkey, entry in self._entries.items() if entry.is_expired(now)]
        for qkey in expired:
            self._expire(qkey)
        return len(expired)

    def __contains__(self, key: str) -> bool:
        return self.contains(key)

    def __len__(self) -> int:
        """The number of live keys, all namespaces together."""
        now = self._clock()
        return sum(1 for entry in self._entries.values() if not entry.is_expired(now))

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    # -- snapshots -----------------------------------------------------------------------

    def snapshot(self) -> str:
        """The live contents as JSON text (see :mod:`memstore.snapshot`)."""
        now = self._clock()
        records = [
            _snapshot.encode_entry(*split(qkey), entry, now)
            for qkey, entry in self._entries.items()
            if not entry.is_expired(now)
        ]
        return _snapshot.dumps(records)

    def restore(self, text: str) -> int:
        """Replace the contents with a snapshot's; returns how many keys were restored.

        Nothing is changed when the snapshot is invalid. Restoring emits no events and may
        exceed ``max_items`` only until the next new key makes room.
        """
        records = _snapshot.loads(text)
        now = self._clock()
        decoded = [_snapshot.decode_entry(record, now) for record in records]
        self._entries.clear()
        self._lru.clear()
        for namespace, key, entry in decoded:
            qkey = qualify(namespace, key)
            self._entries[qkey] = entry
            self._lru.touch(qkey)
        return len(decoded)

    # -- internals -----------------------------------------------------------------------

    def _live_entry(self, qkey: str) -> Entry | None:
        """The entry for ``qkey`` if it is live; an expired one is dropped on the way."""
        entry = self._entries.get(qkey)
        if entry is None:
            return None
        if entry.is_expired(self._clock()):
            self._expire(qkey)
            return None
        return entry

    def _make_room(self) -> None:
        """Free one slot for a new key when the store is full."""
        if self.max_items is None or len(self._entries) < self.max_items:
            return
        if self.purge_expired():
            return
        self._evict(self._lru.victim())

    def _evict(self, qkey: str) -> None:
        entry = self._entries[qkey]
        self._remove(qkey)
        self._emit("evict", qkey, entry.value)

    def _expire(self, qkey: str) -> None:
        entry = self._entries[qkey]
        self._remove(qkey)
        self._emit("expire", qkey, entry.value)

    def _remove(self, qkey: str) -> None:
        del self._entries[qkey]
        self._lru.discard(qkey)

    def _emit(self, name: str, qkey: str, value: Any) -> None:
        namespace, key = split(qkey)
        self.hooks.emit(Event(name, namespace, key, value))
