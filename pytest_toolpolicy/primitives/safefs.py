"""Host-side reads and writes of workspace files that never follow a link out of the workspace.

A workspace is hostile: whatever ran in the sandbox may have replaced a file or a directory by a
symlink to a host path, a FIFO that blocks whoever opens it, or a file too large to hold. Every
host-side read or write of a workspace path goes through here: each component below the root is
checked with ``lstat`` (no link, anywhere on the way), the last one is opened with
``O_NOFOLLOW`` (and ``O_NONBLOCK``, so a FIFO cannot stall the harness), and a read is bounded.
The harness never runs concurrently with the sandbox over one workspace, so a check made here
still holds when the file is opened.

Errors: ``UnsafePath`` (a ``PrimitiveError``: the workspace's own doing, shown to the model) for
a path that leaves the workspace, passes through a link or a non-directory, or names something
that is not a regular file or is over the limit; a missing file is ``FileNotFoundError``; any
other ``OSError`` (permissions a sandboxed run changed, a full disk) propagates as is.
"""

from __future__ import annotations

import contextlib
import errno
import operator
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

from .envelope import PrimitiveError

# What a new file gets when no mode is given (mkstemp's 0600 would surprise the sandboxed run).
_NEW_FILE_MODE = 0o644
_NAME = operator.attrgetter("name")


class UnsafePath(PrimitiveError):
    """A workspace path that leaves the workspace, passes through a link, or is not a regular
    file; the message says which."""


def inside(root: Path, rel: str | os.PathLike[str], *, final_link_ok: bool = False) -> Path:
    """``root / rel`` after checking that ``rel`` stays below ``root`` with no symlink on the
    way (the last component may be a link only with ``final_link_ok``). Missing components are
    fine: the path may be about to be created."""
    text = os.fspath(rel)
    parts = PurePosixPath(text).parts
    if not parts or PurePosixPath(text).is_absolute() or ".." in parts or "\0" in text:
        raise UnsafePath(f"path leaves the workspace: {text!r}")
    path = Path(root)
    for n, part in enumerate(parts):
        path = path / part
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            return Path(root).joinpath(*parts)
        except NotADirectoryError:  # a file where a directory of the path should be
            where = "/".join(parts[:n])
            raise UnsafePath(f"refusing {text}: {where} is not a directory") from None
        if stat.S_ISLNK(mode) and not (final_link_ok and n == len(parts) - 1):
            where = "/".join(parts[: n + 1])
            what = "it" if n == len(parts) - 1 else where
            raise UnsafePath(f"refusing {text}: {what} is a symbolic link")
    return path


def below(root: Path, path: str | os.PathLike[str], *, final_link_ok: bool = False) -> Path:
    """``path`` (absolute, or relative to the working directory) after checking that it lies
    below ``root`` with no link between the two: ``inside`` for a caller that holds a whole
    path. ``root`` itself is the caller's own, trusted directory."""
    base, target = Path(os.path.abspath(root)), Path(os.path.abspath(path))
    if target == base or base not in target.parents:
        raise UnsafePath(f"refusing {os.fspath(path)}: not below {os.fspath(root)}")
    return inside(base, target.relative_to(base).as_posix(), final_link_ok=final_link_ok)


def make_dirs(root: Path, rel: str | os.PathLike[str]) -> Path:
    """``root/rel`` as a directory, each missing component made and none of them a link or a
    non-directory (``UnsafePath`` naming it): ``mkdir(parents=True)`` follows links."""
    path = Path(root)
    for part in PurePosixPath(inside(root, rel).relative_to(root).as_posix()).parts:
        path = path / part
        with contextlib.suppress(FileExistsError):
            os.mkdir(path)
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            raise UnsafePath(
                f"refusing {os.fspath(rel)}: {path.relative_to(root)} is not a directory"
            )
    return path


def remove_tree(path: Path, *, within: Path) -> None:
    """Remove ``path`` and everything below it; ``path`` must lie below ``within`` (the
    caller's own directory) with no link on the way — a link there means something else wrote
    into the tree, and following it would delete what lies outside (``UnsafePath``). A link at
    ``path`` itself, or anywhere below it, is removed, never followed. What cannot be listed or
    removed (a sandboxed run may leave directories mode 000 or 0o500) gets its directory made
    usable (0o700) and is retried once, a directory then removed whole."""
    top = str(below(within, path, final_link_ok=True))
    try:
        mode = os.lstat(top).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(mode):
        os.unlink(top)
        return
    retried: set[str] = set()

    def retry(func: Callable[..., Any], failed: str, exc: BaseException) -> None:
        if failed != top:  # the directory holding it, never above ``path``
            _open_up(os.path.dirname(failed))
        try:
            mode = os.lstat(failed).st_mode
        except FileNotFoundError:  # removed whole by an earlier retry
            return
        if failed in retried:
            raise exc
        retried.add(failed)
        if stat.S_ISDIR(mode):
            _open_up(failed)
            _rmtree(failed, retry)
        else:
            os.unlink(failed)

    _rmtree(top, retry)


def _open_up(directory: str) -> None:
    with contextlib.suppress(OSError):
        if stat.S_ISDIR(os.lstat(directory).st_mode):  # chmod follows links: a directory only
            os.chmod(directory, stat.S_IRWXU)


def _rmtree(path: str, retry: Callable[[Callable[..., Any], str, BaseException], None]) -> None:
    # shutil.rmtree never follows a link below its top (it refuses a link as the top itself).
    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=retry)
    else:
        shutil.rmtree(path, onerror=lambda func, failed, info: retry(func, failed, info[1]))


def lstat(root: Path, rel: str | os.PathLike[str]) -> os.stat_result:
    """``lstat`` of ``root/rel`` with no link on the way to it (the last component is not
    followed either: a link there is reported as a link)."""
    return os.lstat(inside(root, rel, final_link_ok=True))


def is_regular(root: Path, rel: str | os.PathLike[str]) -> bool:
    """Whether ``root/rel`` is a regular file, reached without following a link."""
    try:
        return stat.S_ISREG(lstat(root, rel).st_mode)
    except (UnsafePath, OSError):
        return False


def read_bytes(root: Path, rel: str | os.PathLike[str], limit: int | None = None) -> bytes:
    """A regular file's bytes; ``UnsafePath`` for a link, a FIFO or a device, and for a file
    over ``limit`` bytes (the message gives its size)."""
    name = os.fspath(rel)
    path = inside(root, rel)
    # Refuse what is not a regular file before opening it: opening a device can have effects.
    if not stat.S_ISREG(os.lstat(path).st_mode):
        raise UnsafePath(f"refusing {name}: not a regular file")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # the last component is a link
            raise UnsafePath(f"refusing {name}: it is a symbolic link") from None
        raise
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise UnsafePath(f"refusing {name}: not a regular file")
        if limit is not None and info.st_size > limit:
            raise UnsafePath(
                f"refusing {name}: {info.st_size} bytes, over the {limit}-byte read limit"
            )
        data = handle.read(limit + 1 if limit is not None else -1)
    if limit is not None and len(data) > limit:  # grew while being read
        raise UnsafePath(f"refusing {name}: over the {limit}-byte read limit")
    return data


def read_text(root: Path, rel: str | os.PathLike[str], limit: int | None = None) -> str:
    """``read_bytes`` decoded as UTF-8 (``UnicodeDecodeError`` when it is not)."""
    return read_bytes(root, rel, limit).decode("utf-8")


def write_bytes(
    root: Path, rel: str | os.PathLike[str], data: bytes, mode: int | None = None
) -> Path:
    """Write ``data`` to ``root/rel`` atomically (a temporary file, then a rename that replaces
    a link or file at ``rel`` itself, never what a link points to). Missing parent directories
    are made; a parent that is a link is refused. ``mode`` defaults to 0644."""
    path = inside(root, rel, final_link_ok=True)
    parent = path.parent
    for ancestor in reversed([parent, *parent.parents]):
        if ancestor == root or root not in ancestor.parents:
            continue
        try:
            os.mkdir(ancestor)
        except FileExistsError:
            if not stat.S_ISDIR(os.lstat(ancestor).st_mode):
                raise UnsafePath(
                    f"refusing {os.fspath(rel)}: {ancestor.relative_to(root)} is not a directory"
                ) from None
    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):  # os.replace would fail with less to say
            raise UnsafePath(f"refusing to write {os.fspath(rel)}: it is a directory")
    except FileNotFoundError:
        pass
    fd, tmp = tempfile.mkstemp(dir=parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, stat.S_IMODE(mode) if mode is not None else _NEW_FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_text(root: Path, rel: str | os.PathLike[str], text: str, mode: int | None = None) -> Path:
    """UTF-8 (lone surrogates kept as the bytes they stand for); newlines are written as
    they are in ``text``, never translated."""
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


def scan(
    root: Path, suffix: str, keep_dir: Callable[[str], bool]
) -> tuple[dict[str, os.stat_result], dict[str, str]]:
    """Every regular file below ``root`` whose name ends in ``suffix``, with its ``lstat``, in
    top-down order (a directory's files, then its subdirectories, both sorted), found without
    following any link: a link, to a file or a directory, inside the workspace or out, is not
    part of the tree. Directories for which ``keep_dir(name)`` is false are not entered. Also
    the refusals, ``rel -> why``: links and non-regular files named like wanted files, links
    named like packages, directories that cannot be listed."""
    files: dict[str, os.stat_result] = {}
    refused: dict[str, str] = {}
    stack = [""]
    while stack:
        base = stack.pop()
        try:
            with os.scandir(os.path.join(root, base)) as listing:
                entries = sorted(listing, key=_NAME)
        except OSError as exc:  # e.g. a directory a sandboxed run made unreadable
            refused[base] = f"refusing {base}: cannot list it ({exc.strerror})"
            continue
        subdirs = []
        for entry in entries:
            name = entry.name
            rel = f"{base}/{name}" if base else name
            try:
                if entry.is_symlink():
                    if name.endswith(suffix) or name.isidentifier():
                        refused[rel] = f"refusing {rel}: it is a symbolic link"
                elif entry.is_dir(follow_symlinks=False):
                    if keep_dir(name):
                        subdirs.append(rel)
                elif name.endswith(suffix):
                    info = entry.stat(follow_symlinks=False)
                    if stat.S_ISREG(info.st_mode):
                        files[rel] = info
                    else:
                        refused[rel] = f"refusing {rel}: not a regular file"
            except FileNotFoundError:  # gone since the directory was listed
                continue
        stack.extend(reversed(subdirs))
    return files, refused
