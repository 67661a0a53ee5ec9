"""The record/replay cache's file: plain SQLite in WAL mode, shared by concurrent processes.

Schema (version 1)::

    schema_version(version INTEGER NOT NULL)              -- one row
    completions(key TEXT PRIMARY KEY,                      -- sha256 hex of `request`
                model TEXT NOT NULL,                       -- the model id the key was made with
                request TEXT NOT NULL,                     -- canonical JSON: model, messages, params
                completion TEXT NOT NULL)                  -- JSON of a Completion or an error (below)

``completion`` holds one of two JSON objects, both written with sorted keys:

* a completion: the ``Completion``'s fields minus ``replayed`` (``{"cost_usd": ..., "extra":
  ..., "latency_s": ..., "model": ..., "text": ..., "usage": {...}}``);
* an error entry, a call that raised ``ModelError``: ``{"error": "<message>", "usage": {...}}``,
  the message exactly and the usage the server reported, or ``"usage": null`` where unknown;
  and ``"error_blame": "request"`` when the endpoint refused the request itself (absent: the
  endpoint's fault, as every entry written before the key existed), so a replayed refusal is
  the caller's failure as the recorded one was.
  Its text starts with ``{"error": `` (no completion's does, ``cost_usd`` sorts first), which
  is how both this module and the SQL that writes over an error entry tell the two apart.

A completion is never overwritten; an error entry is, by a later completion or error for its
key (a recording run retries what failed). Version 1 files from before error entries are the
same files without them: nothing else in the format changed.

Nothing else is written: no API key, header, path or timestamp, so a recorded file can be
committed and replayed anywhere. (An error's message carries no key either: models scrub them.)

A file is data from outside when it is replayed: an entry that is not one of the two objects
above (not JSON, nested deeper than ``jsonsafe.MAX_DEPTH`` levels, a number past Python's digit
limit, a field of the wrong type) is a ``CacheEntryError`` naming the file and the entry's key.
What this module writes always reads back: a completion's ``extra`` nested deeper than that is
stored cut, as ``jsonsafe.clean`` cuts it.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import MISSING, asdict, dataclass, fields
from pathlib import Path
from typing import Any

from .. import jsonsafe
from .base import Blame, Completion, ModelError, Usage
from .usage import check_usage

SCHEMA_VERSION = 1

_TABLES = (
    "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS completions (key TEXT PRIMARY KEY, model TEXT NOT NULL,"
    " request TEXT NOT NULL, completion TEXT NOT NULL)",
)
# How an error entry's JSON begins (see the module docstring).
_ERROR_PREFIX = '{"error": '
# A completion is stored unless one already is; an error entry under the key gives way. One
# statement, so concurrent writers (each in its own transaction) can never overwrite a completion.
_STORE = (
    "INSERT INTO completions (key, model, request, completion) VALUES (?,?,?,?)"
    " ON CONFLICT(key) DO UPDATE SET completion = excluded.completion"
    f" WHERE substr(completions.completion, 1, {len(_ERROR_PREFIX)}) = ?"
)
_USAGE_FIELDS = {f.name for f in fields(Usage)}
_COMPLETION_FIELDS = {f.name for f in fields(Completion)} - {"usage", "replayed"}
_REQUIRED_FIELDS = {
    f.name for f in fields(Completion) if f.default is MISSING and f.default_factory is MISSING
} - {"usage"}
# Connections inherited across fork(): never used again, and never closed either, since a
# close in the child could act on the parent's database state. Kept here so GC does not close them.
_ABANDONED: list[sqlite3.Connection] = []


class CacheError(Exception):
    """The cache file cannot be used: missing for replay, not a cache, or an unknown schema."""


class CacheEntryError(CacheError):
    """One stored entry cannot be read; the message names the file, the key and why."""


@dataclass(frozen=True)
class CacheEntry:
    key: str
    model: str
    request: dict[str, Any]
    completion: Completion | None  # None for an error entry
    error: str | None = None  # an error entry's ModelError message, else None
    error_usage: Usage | None = None  # what the failed call consumed; None: unknown (or no error)
    error_blame: Blame = "endpoint"  # whose fault the recorded error was

    def model_error(self) -> ModelError | None:
        """The recorded error as a fresh ``ModelError``; None for a completion."""
        if self.error is None:
            return None
        return ModelError(self.error, usage=self.error_usage, blame=self.error_blame)


class CacheFile:
    """One cache file; each process (and each fork) opens its own connection on first use."""

    def __init__(self, path: str | os.PathLike[str], *, create: bool) -> None:
        self.path = Path(path)
        self._create = create
        self._conn: sqlite3.Connection | None = None
        self._pid = 0
        self._file: tuple[int, int] | None = None  # (device, inode) of what _conn has open
        if not create and not self.path.is_file():
            raise CacheError(
                f"no cache file at {self.path}; record one with --toolpolicy-cache=record"
            )
        self._connection()  # a bad file is an error when the run starts, not at its first call

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None or self._pid != os.getpid() or self._replaced():
            if self._conn is not None:
                _ABANDONED.append(self._conn)
            self._conn, self._pid = self._open(), os.getpid()
            self._file = self._identity()
        return self._conn

    def _identity(self) -> tuple[int, int] | None:
        try:
            stat = os.stat(self.path)
        except OSError:
            return None
        return stat.st_dev, stat.st_ino

    def _replaced(self) -> bool:
        """Whether the path now names another file than the one open (a ``git checkout`` or
        ``git stash`` of a committed recording mid-run writes a new file): SQLite would refuse
        every later write to the old one ("attempt to write a readonly database") and each
        completion the run paid for would be lost, so the new file is opened instead."""
        now = self._identity()
        if now == self._file:
            return False
        if now is None and not self._create:
            raise CacheError(f"cache file {self.path} was removed while the run read it")
        return True

    def _open(self) -> sqlite3.Connection:
        if self._create:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        for attempt in range(1, 51):
            conn = sqlite3.connect(
                self.path, timeout=60, isolation_level=None, check_same_thread=False
            )
            try:
                self._setup(conn)
                return conn
            except BaseException as exc:
                conn.close()
                # Processes creating one fresh database together can be refused ("database is
                # locked") without the busy timeout ever applying; that race is over in moments.
                if isinstance(exc, sqlite3.OperationalError) and _is_busy(exc) and attempt < 50:
                    time.sleep(0.01 * attempt)
                    continue
                if isinstance(exc, sqlite3.OperationalError):
                    raise CacheError(f"cannot open cache file {self.path}: {exc}") from exc
                if isinstance(exc, sqlite3.DatabaseError):
                    raise CacheError(f"{self.path} is not a cache file: {exc}") from exc
                raise
        raise AssertionError("unreachable")

    def _setup(self, conn: sqlite3.Connection) -> None:
        if self._create:
            conn.execute("PRAGMA synchronous=NORMAL")
            # Only an empty file is made into a cache: never add tables to someone else's database.
            if conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0:
                _create_schema(conn)
        try:
            versions = [row[0] for row in conn.execute("SELECT version FROM schema_version")]
        except sqlite3.OperationalError as exc:
            if "no such table" not in str(exc):
                raise
            raise sqlite3.DatabaseError("it has no schema_version table") from exc
        if versions != [SCHEMA_VERSION]:
            found = ", ".join(map(str, versions)) or "none"
            raise CacheError(
                f"cache file {self.path} has schema version {found}; this version of"
                f" pytest-toolpolicy reads version {SCHEMA_VERSION} only: re-record it"
            )

    def get(self, key: str) -> Completion | ModelError | None:
        """What is stored for ``key``: a completion flagged ``replayed=True``, a fresh
        ``ModelError`` for an error entry, or None."""
        sql = "SELECT completion FROM completions WHERE key = ?"
        row = self._connection().execute(sql, (key,)).fetchone()
        if row is None:
            return None
        completion, error = self._entry(key, row[0])
        return error if completion is None else completion

    def put(self, key: str, model: str, request: str, completion: Completion) -> bool:
        """Store a completion unless one is already stored under ``key`` (an error entry is
        replaced); True if stored."""
        return self._store(key, model, request, _dump(completion))

    def put_error(self, key: str, model: str, request: str, error: ModelError) -> bool:
        """Store an error entry unless a completion is already stored under ``key`` (an earlier
        error entry is replaced); True if stored."""
        return self._store(key, model, request, _dump_error(error))

    def _store(self, key: str, model: str, request: str, text: str) -> bool:
        conn = self._connection()
        cursor = conn.execute(_STORE, (key, model, request, text, _ERROR_PREFIX))
        if cursor.rowcount != 1:
            return False
        # Keep the main file current, so copying it alone (to commit it) loses nothing even
        # while a recorder is still running or was killed before it could close.
        conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        return True

    def entries(self) -> Iterator[CacheEntry]:
        """Every stored entry, in the order it was recorded."""
        sql = "SELECT key, model, request, completion FROM completions ORDER BY rowid"
        rows = self._connection().execute(sql).fetchall()
        for key, model, request, text in rows:
            completion, error = self._entry(key, text)
            try:
                asked = jsonsafe.loads(request)
            except ValueError as exc:
                raise self._bad(key, f"its request is not JSON ({_reason(exc)})") from None
            if error is None:
                yield CacheEntry(key, model, asked, completion)
            else:
                yield CacheEntry(key, model, asked, None, str(error), error.usage, error.blame)

    def _entry(self, key: str, text: str) -> tuple[Completion, None] | tuple[None, ModelError]:
        try:
            return _load_entry(text)
        except ValueError as exc:
            raise self._bad(key, _reason(exc)) from None

    def _bad(self, key: str, reason: str) -> CacheEntryError:
        return CacheEntryError(f"cache file {self.path}: entry {key} cannot be read: {reason}")

    def count(self) -> int:
        return self._connection().execute("SELECT count(*) FROM completions").fetchone()[0]

    def close(self) -> None:
        if self._conn is not None:
            if self._pid == os.getpid():
                self._conn.close()
            else:
                _ABANDONED.append(self._conn)
        self._conn = None


def _create_schema(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("BEGIN IMMEDIATE")  # other processes may be making the same file right now
    try:
        for table in _TABLES:
            conn.execute(table)
        if conn.execute("SELECT count(*) FROM schema_version").fetchone()[0] == 0:
            conn.execute("INSERT INTO schema_version VALUES (?)", (SCHEMA_VERSION,))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    conn.execute("PRAGMA wal_checkpoint(PASSIVE)")  # see CacheFile.put()


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    return "locked" in str(exc) or "busy" in str(exc)


def _dump(completion: Completion) -> str:
    # Shallow: asdict's deep copy would itself fail on an ``extra`` nested hundreds deep.
    data = {f.name: getattr(completion, f.name) for f in fields(Completion)}
    data["usage"] = asdict(completion.usage)
    del data["replayed"]
    try:
        # A reply's lone surrogates are kept exactly, so a replayed run sees the recorded text
        # and its later requests (which carry that text) have the recorded keys.
        text = jsonsafe.exact(data, sort_keys=True)
        jsonsafe.check_depth(text)  # no deeper than replay reads
        return text
    except (RecursionError, ValueError, TypeError):
        # Only ``extra`` can be this odd (too deep, a key json cannot write); cut and escaped
        # there is better than a recording lost.
        return jsonsafe.dumps(jsonsafe.clean(data), sort_keys=True)


def _dump_error(error: ModelError) -> str:
    usage = None if error.usage is None else asdict(error.usage)
    data: dict[str, Any] = {"error": str(error), "usage": usage}
    if error.blame == "request":  # sorts after "error": the entry's prefix is unchanged
        data["error_blame"] = "request"
    # Exact, like a reply: the replayed message is the recorded one, lone surrogates included.
    return jsonsafe.exact(data, sort_keys=True)


def _load_entry(text: str) -> tuple[Completion, None] | tuple[None, ModelError]:
    """The entry stored as ``text``, or a ``ValueError`` saying why it is none."""
    data = jsonsafe.loads(text)
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    if text.startswith(_ERROR_PREFIX):
        if not isinstance(data.get("error"), str):
            raise ValueError("'error' is not a string")
        usage = None if data.get("usage") is None else _usage(data["usage"])
        blame = data.get("error_blame", "endpoint")
        if blame not in ("request", "endpoint"):
            raise ValueError("'error_blame' is neither 'request' nor 'endpoint'")
        return None, ModelError(data["error"], usage=usage, blame=blame)
    return _load(data), None


def _usage(data: object) -> Usage:
    if not isinstance(data, dict):
        raise ValueError("'usage' is not an object")
    # Fields a later version added or dropped are tolerated, so old recordings stay readable.
    usage = Usage(**{k: v for k, v in data.items() if k in _USAGE_FIELDS})
    check_usage(usage)
    return usage


def _load(data: dict[str, Any]) -> Completion:
    if "usage" not in data:
        raise ValueError("no 'usage'")
    usage = _usage(data.pop("usage"))
    known = {k: v for k, v in data.items() if k in _COMPLETION_FIELDS}
    for name, kind in (("text", str), ("model", str), ("extra", dict)):
        if name in known and not isinstance(known[name], kind):
            raise ValueError(f"{name!r} is not a {'string' if kind is str else 'JSON object'}")
    for name in ("cost_usd", "latency_s"):
        value = known.get(name)
        if not (value is None or isinstance(value, (int, float))) or isinstance(value, bool):
            raise ValueError(f"{name!r} is not a number")
    missing = sorted(_REQUIRED_FIELDS - set(known))
    if missing:
        raise ValueError(f"no {', '.join(map(repr, missing))}")
    return Completion(**known, usage=usage, replayed=True)


def _reason(exc: ValueError) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"not JSON ({exc.msg} at char {exc.pos})"
    return str(exc)[:120]
