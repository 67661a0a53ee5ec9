"""Never run the same thing twice: tool results and grades keyed by the workspace's tree hash.

A test run, a sandboxed command or an edit is a function of the workspace's content (its git
tree hash, which is exact, not a guess), the call and the interpreter. Counterfactual reruns and
ablation variants keep reaching states already seen, so the memo serves them: a hit returns the
captured envelope and, for a call that changed files, writes the files it changed, which puts
the workspace at the same tree as the original call left it (checked).

Whatever ran in the sandbox may have left links to host paths, FIFOs and huge files behind, so
capture and replay never follow a link: a changed path is captured with ``lstat`` (a link as its
target string, never what it points to) and written back through ``safefs``, which replaces a
link at the path instead of writing through it. A change that cannot be captured so (a
directory, a FIFO, a file over the read limit) is simply not memoized.

The store is one SQLite file (WAL) that the session's worker processes share; the first result
stored for a key is the one every later lookup gets. ``ExecutionMemo(None)`` keeps it in memory
(one process).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import jsonsafe
from ..primitives.envelope import Dispatch, Envelope, PrimitiveError
from ..primitives.toolbox import Toolbox
from ..sqlite_shared import open_shared
from .memo_files import Change, apply_change, changed_files

# Reads change nothing, so the tree hash known before one is still right after it: a run of
# reads costs one hash, and a rerun's replayed prefix executes nothing at all.
READ_ONLY = frozenset({"read_entity", "search_symbol", "search_code", "read_file"})
# Part of every key: bump it when what is stored (or how it is replayed) changes, so an entry an
# older harness wrote is never served. 2: files as {mode, text|base64} or {link}. 3: grading
# follows SWE-bench's test-id conventions and sets infrastructure failures apart.
FORMAT_VERSION = 3


class MemoError(RuntimeError):
    """A memo entry did not reproduce its recorded tree: a harness fault, never hidden."""


@dataclass
class DispatchStats:
    """What a run's tool calls cost, in figures that depend on the run alone: ``executed``
    counts the calls the item had not made before (in its first run or an earlier rerun), which
    is what it would have run with only its own results to reuse. How many of those the shared
    memo also served (from another item's or variant's runs) depends on which ran first, so
    on scheduling, and is not recorded: the same session gives the same figures under ``-n 0``
    and ``-n auto``."""

    calls: int = 0  # every tool call the loop made
    executed: int = 0  # of which the item had not made before
    hits: int = 0  # calls - executed


def _setup(db: sqlite3.Connection) -> None:
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA busy_timeout=60000")
    db.execute("CREATE TABLE IF NOT EXISTS memo (key TEXT PRIMARY KEY, value TEXT)")
    db.commit()


class ExecutionMemo:
    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._mem: dict[str, str] = {}
        self._db: sqlite3.Connection | None = None
        if path is not None:
            # Every worker opens it at once at the session's start (seen: "database is
            # locked" on a fresh file): open_shared retries that race.
            # Implicit transactions, each BEGIN deferred (what sqlite3's legacy "" also meant).
            self._db = open_shared(
                path, _setup, isolation_level="DEFERRED", check_same_thread=False
            )

    def get(self, key: str) -> Any | None:
        with self._lock:
            if self._db is None:
                raw = self._mem.get(key)
            else:
                row = self._db.execute("SELECT value FROM memo WHERE key = ?", (key,)).fetchone()
                raw = row[0] if row else None
        return None if raw is None else json.loads(raw)

    def put(self, key: str, value: Any) -> None:
        raw = jsonsafe.dumps(value)
        with self._lock:
            if self._db is None:
                self._mem.setdefault(key, raw)
            else:
                self._db.execute("INSERT OR IGNORE INTO memo VALUES (?, ?)", (key, raw))
                self._db.commit()

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


class MemoDispatch:
    """A loop's ``dispatch`` with the memo in front; counts what it really ran.

    It knows the workspace's tree hash between calls, so every change to the workspace must go
    through it (true of both loops: only tool calls write); after changing files behind its
    back, call ``invalidate``.
    """

    def __init__(
        self,
        memo: ExecutionMemo | None,
        inner: Dispatch,
        toolbox: Toolbox,
        scope: str,
        seen: set[str] | None = None,
    ):
        self.memo = memo
        self.inner = inner
        self.toolbox = toolbox
        self.scope = scope
        self.stats = DispatchStats()
        # The keys this item's runs made so far (shared by its first run and its reruns).
        self.seen: set[str] = set() if seen is None else seen
        self._tree: str | None = None  # the workspace's tree hash, while known to be current

    def __call__(self, tool: str, args: dict[str, Any]) -> Envelope:
        self.stats.calls += 1
        workspace = self.toolbox.workspace
        if self.memo is None or workspace is None:
            self.stats.executed += 1
            return self.inner(tool, args)
        before = self._tree or workspace.tree_hash()
        key = _key(self.scope, tool, args, before, self.toolbox.python)
        fresh = key not in self.seen
        self.seen.add(key)
        self.stats.executed += fresh
        self.stats.hits += not fresh
        found = self.memo.get(key)
        if found is not None:
            self._replay(found, before)
            self._tree = found["after"]
            return found["envelope"]
        envelope = self.inner(tool, args)
        after = before if tool in READ_ONLY else workspace.tree_hash()
        changes = {} if after == before else changed_files(self.toolbox, before, after)
        if changes is not None:
            self.memo.put(key, {"envelope": envelope, "after": after, "files": changes})
        self._tree = after
        return envelope

    def invalidate(self) -> None:
        self._tree = None

    def _replay(self, entry: dict[str, Any], before: str) -> None:
        files: dict[str, Change] = entry["files"]
        if not files and entry["after"] == before:
            return
        root = self.toolbox.root
        for rel, change in files.items():
            try:
                apply_change(root, rel, change)
            except (PrimitiveError, OSError) as exc:
                raise MemoError(f"memo entry could not be replayed at {rel}: {exc}") from exc
        self.toolbox.index.refresh()
        workspace = self.toolbox.workspace
        assert workspace is not None
        if workspace.tree_hash() != entry["after"]:
            raise MemoError(f"memo entry did not reproduce tree {entry['after']}")


def grade_key(instance_id: str, tree: str, python: str | None, tests_visible: bool) -> str:
    return _key("grade", instance_id, {"visible": tests_visible}, tree, python)


def _key(scope: str, tool: str, args: Any, tree: str, python: str | None) -> str:
    parts = [FORMAT_VERSION, scope, tool, args, tree, python or ""]
    canonical = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
