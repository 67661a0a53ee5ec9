"""The report directory on disk: each finished item's record, and the session that owns it.

One file per item (``items/<item id>.json``): written to a temporary name in the same directory
and renamed, so a session killed at any point leaves every finished item whole and none half
written. Nothing is ever deleted at the start of a session: an item's file is replaced only when
that item runs again, so ``-k``, ``--collect-only`` or a second look at the same directory never
lose a finished result. ``--toolpolicy-resume`` reads the records back and skips those items,
and reports every record of the directory, not only the items the session selected.

Each record carries the ``attempt`` that wrote it, so the controller takes from disk only what
this session wrote (a record left by an earlier session is never mistaken for this one's).
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from .. import jsonsafe
from ..decide.variants import item_of
from ..paths import safe_name, write_atomic
from ..types import Trajectory

LOCK_NAME = "session.lock"


class ReportDirError(Exception):
    """The report directory cannot be used: it cannot be created or written."""


class ReportDirTaken(ReportDirError):
    """Another live session holds the report directory."""


class ItemStore:
    def __init__(self, directory: Path) -> None:
        self.directory = directory / "items"

    def path(self, item_id: str) -> Path:
        return self.directory / f"{safe_name(item_id, keep=':')}.json"

    def encode(
        self,
        item_id: str,
        row: dict[str, Any],
        trajectory: Trajectory | None,
        attempt: str | None = None,
    ) -> str:
        """The record's text; raises only if even ``jsonsafe`` cannot write it."""
        record = {
            "item": item_id,
            "attempt": attempt,
            "row": row,
            "trajectory": trajectory.to_dict() if trajectory else None,
        }
        return jsonsafe.dumps(record, allow_nan=True)

    def write(self, item_id: str, text: str) -> Path:
        self.directory.mkdir(parents=True, exist_ok=True)
        return write_atomic(self.path(item_id), lambda p: p.write_text(text, encoding="utf-8"))

    def save(
        self,
        item_id: str,
        row: dict[str, Any],
        trajectory: Trajectory | None,
        attempt: str | None = None,
    ) -> Path:
        return self.write(item_id, self.encode(item_id, row, trajectory, attempt))

    def read(self, item_id: str) -> dict[str, Any] | None:
        """The record as written, whatever its status; None when missing or unreadable."""
        return self._read(self.path(item_id))

    @staticmethod
    def _read(path: Path) -> dict[str, Any] | None:
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return record if isinstance(record, dict) else None

    def load(self, item_id: str) -> dict[str, Any] | None:
        """A finished item's record, or None (missing, unreadable, or a harness fault to retry)."""
        record = self.read(item_id)
        if record is None or (record.get("row") or {}).get("status") != "ok":
            return None
        return record

    def records(self) -> Iterator[tuple[Path, dict[str, Any] | None]]:
        """Every item's record in the directory, by file name, or None for one that cannot be
        read (a record is written whole or not at all: such a file was written by hand)."""
        if not self.directory.is_dir():
            return
        for path in sorted(self.directory.glob("*.json")):
            if not path.name.startswith("."):  # a write in flight, or cut short by a crash
                record = self._read(path)
                ok = record is not None and _item_of(record) is not None
                yield path, record if ok else None

    def rows(self) -> tuple[dict[str, tuple[dict[str, Any], str | None]], list[str]]:
        """Every record's row and attempt by item id, and the files that cannot be read."""
        found: dict[str, tuple[dict[str, Any], str | None]] = {}
        unreadable: list[str] = []
        for path, record in self.records():
            if record is None:
                unreadable.append(path.name)
            else:
                found[str(_item_of(record))] = (record["row"], record.get("attempt"))
        return found, unreadable

    def clear(self) -> None:
        """Remove every item's record (for tests and users; a session never calls it)."""
        if self.directory.is_dir():
            for path in self.directory.glob("*.json"):  # pathlib's * matches dotfiles too
                path.unlink()

    def sweep(self) -> None:
        """Drop what a write cut short by a crash left (never a finished item). Only the
        session holding the directory's lock may call it: another's writes are in flight."""
        if self.directory.is_dir():
            for path in self.directory.glob(".tmp-*"):
                path.unlink(missing_ok=True)


def _item_of(record: dict[str, Any]) -> str | None:
    """A record's item id, as written, else its row's; None when it has no row to read."""
    row = record.get("row")
    if not isinstance(row, dict):
        return None
    if isinstance(record.get("item"), str) and record["item"]:
        return str(record["item"])
    try:
        return item_of(row)
    except KeyError:
        return None


def prepare(directory: Path) -> None:
    """Create the report directory and prove it writable, or raise ``ReportDirError`` naming
    the path and the OS's reason (so it is a usage error before anything runs, not a lost item)."""
    items = directory / "items"
    try:
        items.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=items, prefix=".tmp-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        where = exc.filename or items
        raise ReportDirError(f"cannot write to {where}: {exc.strerror or exc}") from None


def claim(directory: Path) -> IO[str]:
    """Hold the report directory for this session: an exclusive, non-blocking lock on
    ``session.lock`` with the holder's pid in it. The lock ends with the process (a killed
    session leaves nothing to clean up); close the returned file to release it earlier."""
    path = directory / LOCK_NAME
    try:
        handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - held for the session
    except OSError as exc:
        raise ReportDirError(f"cannot write to {path}: {exc.strerror or exc}") from None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.seek(0)
        holder = handle.read().strip() or "unknown"
        handle.close()
        raise ReportDirTaken(
            f"another session (pid {holder}) is using the report directory {directory}"
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    return handle
