"""Disk caches keyed by content hash: SQLite in WAL mode, safe for concurrent processes.

``BlobCache`` maps a key to bytes in one table; ``VectorCache`` is the embedder's (float32
vector bytes keyed by a hash of model and text, so a text embedded at one commit is a lookup at
every other) and the code index's parse cache (``parsecache.py``) is another table of the kind.
"""

from __future__ import annotations

import os
import re
import sqlite3
from pathlib import Path

from ..sqlite_shared import open_shared

_TABLE = re.compile(r"[a-z_]+\Z")


class BlobCache:
    """SQLite (WAL) map from key to bytes in table ``table``, shared by concurrent processes."""

    def __init__(self, path: Path, table: str) -> None:
        if not _TABLE.match(table):
            raise ValueError(f"bad table name {table!r}")
        self.path = path
        self.table = table
        self._conn: sqlite3.Connection | None = None
        self._pid = 0

    def _connect(self) -> sqlite3.Connection:
        if self._conn is None or self._pid != os.getpid():  # never reuse a forked connection
            conn = open_shared(self.path, self._setup)
            self._conn, self._pid = conn, os.getpid()
        return self._conn

    def _setup(self, conn: sqlite3.Connection) -> None:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        # A rowid table: a 1.5 kB vector fits its page, not so in a WITHOUT ROWID table.
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {self.table} (key BLOB PRIMARY KEY, vec BLOB NOT NULL)"
        )

    def get_many(self, keys: list[bytes]) -> dict[bytes, bytes]:
        conn = self._connect()
        found: dict[bytes, bytes] = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i : i + 500]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT key, vec FROM {self.table} WHERE key IN ({marks})"
            found.update(conn.execute(sql, chunk))
        return found

    def put_many(self, items: list[tuple[bytes, bytes]]) -> None:
        conn = self._connect()
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany(f"INSERT OR IGNORE INTO {self.table} VALUES (?, ?)", items)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


class VectorCache(BlobCache):
    """The embedder's vectors: key = sha256(model id + text), value = float32 bytes."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, "vectors")
