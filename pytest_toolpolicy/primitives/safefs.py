"""Host-side reads and writes of workspace files that never follow a link out of the workspace.

A workspace is hostile: whatever ran in the sandbox may have replaced a file or a directory by a
symlink to a host path, a FIFO that blocks whoever opens it, or a file too large to hold. Every
host-side read or write of a workspace path goes through here: each component below the root is
checked with ``lstat`` (no link, anywhere on the way), the last one is opened with
``O_NOFOLLOW`` (and ``O_NONBLOCK``, so a FIFO cannot stall the harness), and a read is bounded.
The harness never runs concurrently with the sandbox over one workspace, so a check made here
still holds when the file is opened.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path, PurePosixPath

from .envelope import PrimitiveError


class UnsafePath(PrimitiveError):
    """A workspace path that leaves the workspace, passes through a link, or is not a regular
    file; the message says which."""


def inside(root: Path, rel: str | os.PathLike[str], *, final_link_ok: bool = False) -> Path:
    """``root / rel`` after checking that ``rel`` stays below ``root`` with no symlink on the
    way (the last component may be a link only with ``final_link_ok``). Missing components are
    fine: the path may be about to be created."""
    parts = PurePosixPath(os.fspath(rel)).parts
    if not parts or PurePosixPath(os.fspath(rel)).is_absolute() or ".." in parts:
        raise UnsafePath(f"path leaves the workspace: {os.fspath(rel)}")
    path = Path(root)
    for n, part in enumerate(parts):
        path = path / part
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            return Path(root).joinpath(*parts)
        if stat.S_ISLNK(mode) and not (final_link_ok and n == len(parts) - 1):
            where = "/".join(parts[: n + 1])
            raise UnsafePath(f"refusing {os.fspath(rel)}: {where} is a symbolic link")
    return path


def read_bytes(root: Path, rel: str | os.PathLike[str], limit: int | None = None) -> bytes:
    """A regular file's bytes; ``UnsafePath`` for a link, a FIFO or a device, and for a file
    over ``limit`` bytes (the message gives its size)."""
    path = inside(root, rel)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == 40:  # ELOOP: the last component is a link
            raise UnsafePath(f"refusing {os.fspath(rel)}: it is a symbolic link") from None
        raise
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise UnsafePath(f"refusing {os.fspath(rel)}: not a regular file")
        if limit is not None and info.st_size > limit:
            raise UnsafePath(
                f"refusing {os.fspath(rel)}: {info.st_size} bytes, over the {limit}-byte read limit"
            )
        data = handle.read(limit + 1 if limit is not None else -1)
    if limit is not None and len(data) > limit:  # grew while being read
        raise UnsafePath(f"refusing {os.fspath(rel)}: over the {limit}-byte read limit")
    return data


def read_text(root: Path, rel: str | os.PathLike[str], limit: int | None = None) -> str:
    return read_bytes(root, rel, limit).decode("utf-8")


def write_bytes(
    root: Path, rel: str | os.PathLike[str], data: bytes, mode: int | None = None
) -> Path:
    """Write ``data`` to ``root/rel`` atomically (a temporary file, then a rename that replaces
    a link or file at ``rel`` itself, never what a link points to). Missing parent directories
    are made; a parent that is a link is refused."""
    path = inside(root, rel, final_link_ok=True)
    parent = path.parent
    for ancestor in reversed([parent, *parent.parents]):
        if ancestor == root or root not in ancestor.parents:
            continue
        try:
            os.mkdir(ancestor)
        except FileExistsError:
            if not stat.S_ISDIR(os.lstat(ancestor).st_mode):
                raise UnsafePath(f"refusing {os.fspath(rel)}: {ancestor} is not a directory")
    fd, tmp = tempfile.mkstemp(dir=parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if mode is not None:
            os.chmod(tmp, stat.S_IMODE(mode))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_text(
    root: Path, rel: str | os.PathLike[str], text: str, mode: int | None = None
) -> Path:
    return write_bytes(root, rel, text.encode("utf-8", errors="surrogateescape"), mode)


def remove(root: Path, rel: str | os.PathLike[str]) -> None:
    """Remove the file or link at ``rel`` (never what a link points to); missing is fine."""
    path = inside(root, rel, final_link_ok=True)
    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            raise UnsafePath(f"refusing to remove {os.fspath(rel)}: it is a directory")
        os.unlink(path)
    except FileNotFoundError:
        pass
