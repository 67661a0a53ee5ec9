"""How many bytes a sandboxed run has left in its writable workspace, watched while it runs.

The workspace is bind-mounted writable into the sandbox, so nothing but this bounds what a run
may write to the host's disk; the sandbox stops the run once the bound is broken.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

_FS_LOOK_S = 0.02  # how often DiskWatch asks statvfs whether the filesystem grew


def tree_bytes(root: Path, skip: str = ".git") -> int:
    """What the files under ``root`` cost the host: per entry (directories and links too) the
    larger of its apparent size and its allocated blocks, by lstat only (no link is followed),
    ``root/skip`` left out. Blocks catch space preallocated past the end of a file; the apparent
    size catches a sparse file, which costs little disk but every host-side read of it in full.
    Each hard link counts: each is one more file a snapshot reads."""
    start = os.fspath(root)
    total = 0
    pending = [start]  # a stack, not recursion: a deep tree cannot exhaust it
    while pending:
        top = pending.pop()
        try:
            entries = os.scandir(top)
        except OSError:  # gone meanwhile, or unreadable (only to a harness that is not root)
            continue
        with entries:
            for entry in entries:
                if top == start and entry.name == skip:
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:  # removed between the listing and the lstat
                    continue
                total += max(st.st_size, st.st_blocks * 512)
                if stat.S_ISDIR(st.st_mode):
                    pending.append(entry.path)
    return total


class DiskWatch:
    """The bytes under a run's writable directory (``tree_bytes``), measured before the run,
    while it goes and once more at the end.

    A full measure costs ~10 µs per entry, so while the run goes it happens every ``every``
    seconds, and early when the filesystem's used space (``statvfs``, a few µs, looked at every
    ``_FS_LOOK_S``) has grown by more than the room left under the bound: a fast writer is
    caught within a pump turn, an idle large tree is not re-read four times a second. Other
    writers on the same filesystem can only cause an extra measure, and sparse files (no
    blocks, so invisible to ``statvfs``) still meet the regular one. Measuring never takes more
    than ``share`` of the run: on a large tree the measures spread out."""

    def __init__(self, root: Path, bound: int, every: float = 1.0, share: float = 0.05) -> None:
        self.root = root
        self.bound = bound
        self.every = every
        self.share = share
        self.checks = 0
        self.cost_s = 0.0  # all measuring so far, for whoever wants to know what it costs
        self._due = self._earliest = self._fs_look = 0.0
        self._fs_base = 0
        self.used = self.start = self.measure()

    def measure(self) -> int:
        began = time.monotonic()
        self._fs_base = _fs_used(self.root)
        self.used = tree_bytes(self.root)
        cost = time.monotonic() - began
        self.checks += 1
        self.cost_s += cost
        self._earliest = began + cost / self.share
        self._due = began + max(self.every, cost / self.share)
        return self.used

    @property
    def over(self) -> bool:
        """Past the bound and bigger than at the start: a run that starts over the bound (an
        earlier run left it there) may still read, and delete what it needs to; adding to it
        is what is stopped."""
        return self.used > self.bound and self.used > self.start

    def __call__(self, now: float) -> bool:
        """The pump's tick: measure when due; True once the bound is broken."""
        if now < self._earliest:
            return False
        if now < self._due:
            if now < self._fs_look:
                return False
            self._fs_look = now + _FS_LOOK_S
            if _fs_used(self.root) - self._fs_base <= max(self.bound - self.used, 0):
                return False  # the workspace cannot have grown past the bound since
        self.measure()
        return self.over


def _fs_used(path: Path) -> int:
    try:
        fs = os.statvfs(path)
    except OSError:
        return 0
    return (fs.f_blocks - fs.f_bfree) * fs.f_frsize
