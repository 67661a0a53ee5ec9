"""A disk cache of embedding vectors: SQLite in WAL mode, safe for concurrent processes."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path


class VectorCache:
    """SQLite (WAL) map from key to float32 vector bytes, shared by concurrent processes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._conn: sqlite3.Connection | None = None
        self._pid = 0

    def _connect(self) -> sqlite3.Connection:
        if self._conn is None or self._pid != os.getpid():  # never reuse a forked connection
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            for attempt in range(1, 51):
                try:
                    self._setup(conn)
                    break
                except sqlite3.OperationalError:
                    # Several processes creating one database can be refused without the busy
                    # timeout ever applying; the race is over within moments.
                    if attempt == 50:
                        raise
                    time.sleep(0.01 * attempt)
            self._conn, self._pid = conn, os.getpid()
        return self._conn

    @staticmethod
    def _setup(conn: sqlite3.Connection) -> None:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        # A rowid table: a 1.5 kB vector fits its page, not so in a WITHOUT ROWID table.
        conn.execute("CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vec BLOB NOT NULL)")

    def get_many(self, keys: list[bytes]) -> dict[bytes, bytes]:
        conn = self._connect()
        found: dict[bytes, bytes] = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i : i + 500]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT key, vec FROM vectors WHERE key IN ({marks})"
            found.update(conn.execute(sql, chunk))
        return found

    def put_many(self, items: list[tuple[bytes, bytes]]) -> None:
        conn = self._connect()
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany("INSERT OR IGNORE INTO vectors VALUES (?, ?)", items)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
