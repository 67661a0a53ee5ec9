"""Opening one SQLite file that several processes (pytest-xdist workers, concurrent sessions)
create and use together.

Processes that create one fresh database at once can be refused ("database is locked") while
switching it to WAL or creating its tables, without the busy timeout ever applying; the race is
over within moments. So setting up is retried briefly here, for every such file (the execution
memo, the vector and parse caches), instead of each caller meeting the race on its own.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

ATTEMPTS = 50


def open_shared(
    path: Path,
    setup: Callable[[sqlite3.Connection], None],
    *,
    isolation_level: Literal["DEFERRED", "EXCLUSIVE", "IMMEDIATE"] | None = None,
    check_same_thread: bool = True,
) -> sqlite3.Connection:
    """A connection to ``path`` (its directory made) on which ``setup`` has run."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(
        path, timeout=60, isolation_level=isolation_level, check_same_thread=check_same_thread
    )
    for attempt in range(1, ATTEMPTS + 1):
        try:
            setup(conn)
            return conn
        except sqlite3.OperationalError as exc:
            if attempt == ATTEMPTS or not _is_busy(exc):
                conn.close()
                raise
            time.sleep(0.01 * attempt)
    raise AssertionError("unreachable")


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc)
    return "locked" in text or "busy" in text
