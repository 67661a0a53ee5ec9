"""Where an A/B item runs, and the lock that keeps its directory one process's at a time.

An item runs at a path that is the same every time its report directory runs it
(``<workdir>/<report>-<digest>/<item id>/repo``): paths reach the prompt through test output,
and a path that changed from run to run would make two runs over the same state send different
requests. The report directory is in the path, so two sessions of different reports never share
an item's directory (nor wait on each other's lock), while a resumed session of the same report
runs its items where the first one did.

Two processes that could still meet there (a worker left running by a killed session, a second
session of the same report directory on a machine whose report lock it cannot see) are kept
apart by the item's lock. Its holder writes who it is into the lock file (pid, host, start
time). A process that finds it taken never waits in silence: it leaves a note beside the lock,
which its session's progress line shows (``session/progress_hooks.py``), polls, and after
``bound`` seconds gives up with ``ItemLockTimeout`` naming the holder: the item fails, never
hangs.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import socket
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..paths import safe_name

WORKDIR_ENV = "TOOLPOLICY_WORKDIR"
LOCK_WAIT_ENV = "TOOLPOLICY_LOCK_WAIT"
LOCK_WAIT_S = 600.0
POLL_S = 0.5
NOTE_SUFFIX = ".waiting"
_READ_BYTES = 4096  # a record is a few dozen bytes: never read more of a file in a shared /tmp


class ItemLockTimeout(Exception):
    """An item's lock stayed another process's past the bound; the message names it."""


def default_workdir() -> Path:
    return Path(tempfile.gettempdir()) / "toolpolicy-ab"


def report_root(workdir: Path, report: Path) -> Path:
    """The directory of the items of ``report`` (an absolute path): its name, readable, and a
    digest of the whole path, so two reports of the same name elsewhere differ too."""
    digest = hashlib.sha256(str(report).encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return workdir / f"{safe_name(report.name)[:48]}-{digest}"


def lock_path(directory: Path) -> Path:
    """The item's lock beside its directory. The whole name plus ``.lock``: an item id holds
    dots (``policy-no:trigger.lint``), so ``with_suffix`` would give two gates one lock."""
    return directory.parent / (directory.name + ".lock")


def note_path(directory: Path) -> Path:
    return directory.parent / (directory.name + NOTE_SUFFIX)


@dataclass(frozen=True)
class Holder:
    """Who holds a lock, as its holder wrote it (None where the file does not say)."""

    pid: int | None = None
    host: str = ""
    since: float | None = None  # seconds since the epoch

    @classmethod
    def of_text(cls, text: str) -> Holder:
        try:
            data = json.loads(text)
        except ValueError:
            return cls()
        if not isinstance(data, dict):
            return cls()
        pid, host, since = data.get("pid"), data.get("host"), data.get("since")
        return cls(
            pid=pid if type(pid) is int else None,
            host=host[:100] if isinstance(host, str) else "",
            since=_seconds(since),
        )

    def record(self) -> dict[str, Any]:
        return {"pid": self.pid, "host": self.host, "since": self.since}

    def describe(self) -> str:
        """``pid 123 since 14:03:07`` (the date too when not today, the host when not this)."""
        who = f"pid {self.pid}" if self.pid is not None else "a process that did not say who"
        if self.host and self.host != socket.gethostname():
            who += f" on {self.host}"
        if self.since is not None:
            when = time.localtime(self.since)
            today = time.localtime()[:3] == when[:3]
            who += f" since {time.strftime('%H:%M:%S' if today else '%Y-%m-%d %H:%M:%S', when)}"
        return who


@dataclass(frozen=True)
class Waiting:
    """A process of a session waiting for an item's lock (its note beside the lock)."""

    item: str
    holder: Holder
    since: float

    def describe(self) -> str:
        return f"waiting for {self.item} held by {self.holder.describe()}"


def me() -> Holder:
    return Holder(os.getpid(), socket.gethostname(), time.time())


@contextlib.contextmanager
def held(
    directory: Path, *, item: str, bound: float = LOCK_WAIT_S, token: str = "", poll: float = POLL_S
) -> Iterator[None]:
    """Hold ``directory``'s lock while the block runs. Taken at once, or after a wait that its
    note (``token``: the session's) makes visible, or ``ItemLockTimeout`` after ``bound`` s."""
    fd = _open(lock_path(directory))
    try:
        if not _take(fd):
            _wait(fd, directory, item, bound, token, poll)
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(me().record()).encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)  # a free lock names no one: a waiter never reads a past holder
    finally:
        os.close(fd)  # releases the lock


def _wait(fd: int, directory: Path, item: str, bound: float, token: str, poll: float) -> None:
    start = time.monotonic()
    note = note_path(directory)
    waiting = Waiting(item, holder_of(fd), time.time())
    _write_note(note, waiting, token)
    try:
        while not _take(fd):
            if waiting.holder.pid is None and (holder := holder_of(fd)).pid is not None:
                waiting = Waiting(item, holder, waiting.since)  # taken, not yet signed, before
                _write_note(note, waiting, token)
            if time.monotonic() - start >= bound:
                raise ItemLockTimeout(
                    f"{item}: waited {bound:g} s ({LOCK_WAIT_ENV}) for its directory {directory},"
                    f" held by {holder_of(fd).describe()} (lock {lock_path(directory)}): another"
                    " process runs this item there, of this report directory's session or one"
                    " left running by a session that ended"
                )
            time.sleep(poll)
    finally:
        note.unlink(missing_ok=True)


def _open(path: Path) -> int:
    """The lock file, never through a link put at its name."""
    flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
    try:
        return os.open(path, flags, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(exc.errno, f"the item's lock {path} is a symbolic link") from None
        raise


def _take(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def holder_of(fd: int) -> Holder:
    return Holder.of_text(os.pread(fd, _READ_BYTES, 0).decode("utf-8", "replace"))


def _write_note(note: Path, waiting: Waiting, token: str) -> None:
    """Best effort: a note that cannot be written costs the progress line, not the item."""
    text = json.dumps(
        {"token": token, "item": waiting.item, "since": waiting.since,
         "holder": waiting.holder.record()}
    )  # fmt: skip
    tmp = note.with_name(f".tmp-{os.getpid()}-{note.name}")
    with contextlib.suppress(OSError):
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)
        os.replace(tmp, note)
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def waiting_notes(root: Path, token: str) -> list[Waiting]:
    """The waits of the session ``token`` under ``root`` (another session's, or a note a killed
    process left, are not this session's)."""
    found = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(root):
            if entry.name.endswith(NOTE_SUFFIX) and token:
                with contextlib.suppress(OSError, ValueError):
                    data = json.loads(_read_small(entry.path))
                    if isinstance(data, dict) and data.get("token") == token:
                        found.append(_waiting(data))
    return sorted(found, key=lambda w: (w.since, w.item))


def _waiting(data: dict[str, Any]) -> Waiting:
    since = data.get("since")
    return Waiting(
        str(data.get("item"))[:300],
        Holder.of_text(json.dumps(data.get("holder"))),
        _seconds(since) or time.time(),
    )


def _read_small(path: str) -> str:
    """A file's first bytes, never through a link, never blocking on a FIFO."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        return os.read(fd, _READ_BYTES).decode("utf-8", "replace")
    finally:
        os.close(fd)


def _seconds(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and type(value) is not bool else None
