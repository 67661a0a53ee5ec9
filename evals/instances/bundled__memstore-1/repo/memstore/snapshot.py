"""Snapshots: a store's live contents as JSON text, and back.

A snapshot is portable across processes, so it never holds clock readings: each record
carries the seconds it had left to live when the snapshot was taken, and a restore counts
them from its own clock's current reading.

Format (version 1)::

    {"version": 1, "entries": [{"namespace": "", "key": "a", "value": 1, "ttl": 9.5}, ...]}
"""

from __future__ import annotations

import json
from typing import Any

from .entry import Entry

FORMAT_VERSION = 1
_FIELDS = ("namespace", "key", "value", "ttl")


class SnapshotError(ValueError):
    """The text is not a snapshot this version of memstore can restore."""


def encode_entry(namespace: str, key: str, entry: Entry, now: float) -> dict[str, Any]:
    """The JSON record for one live entry at clock reading ``now``."""
    return {
        "namespace": namespace,
        "key": key,
        "value": entry.value,
        "ttl": entry.remaining(now),
    }


def decode_entry(record: dict[str, Any], now: float) -> tuple[str, str, Entry]:
    """``(namespace, key, entry)`` for a record, expiring ``ttl`` seconds after ``now``."""
    ttl = record["ttl"]
    expires_at = None if ttl is None else now + ttl
    return record["namespace"], record["key"], Entry(record["value"], expires_at)


def dumps(records: list[dict[str, Any]]) -> str:
    """The snapshot text for already encoded records."""
    return json.dumps({"version": FORMAT_VERSION, "entries": records}, sort_keys=True)


def loads(text: str) -> list[dict[str, Any]]:
    """The records of a snapshot, checked for shape; raises :class:`SnapshotError`."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SnapshotError(f"not JSON: {exc}") from None
    if not isinstance(document, dict) or document.get("version") != FORMAT_VERSION:
        version = document.get("version") if isinstance(document, dict) else None
        raise SnapshotError(f"unsupported snapshot version {version!r}")
    records = document.get("entries")
    if not isinstance(records, list):
        raise SnapshotError("snapshot has no 'entries' list")
    for position, record in enumerate(records):
        _check_record(record, position)
    return records


def _check_record(record: Any, position: int) -> None:
    if not isinstance(record, dict):
        raise SnapshotError(f"entry {position} is not an object")
    missing = [name for name in _FIELDS if name not in record]
    if missing:
        raise SnapshotError(f"entry {position} lacks {', '.join(missing)}")
