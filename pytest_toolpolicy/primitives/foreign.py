"""A repository the harness did not make (a user's mirror, a history to mine), read by host git
through a git directory of the harness's own: nothing of the repository's configuration is read.

``hostgit`` switches off, on the command line, every configuration key known to run a program
(``core.fsmonitor``, hooks, pagers, external diffs, ``gpg.program``...). That is a deny-list:
a key it does not know yet (``log.showSignature`` with ``gpg.ssh.program``, a repository
setting them and holding signed commits, made host git run a program of the repository's on
every ``git show``) gets through. So a foreign repository is never git's repository: its git
directory is read only for its refs (``HEAD``, ``packed-refs``, the files under ``refs/``,
``shallow``: plain text, copied with size bounds and without following links) into a *shadow*
git directory whose ``config`` the harness writes from an allow-list —
``core.repositoryformatversion`` and ``extensions.objectformat`` (what reading its objects
needs), nothing else — and whose hooks, attributes and info are the harness's (empty, neutral).
Its objects are read where they are (``GIT_OBJECT_DIRECTORY``). Whatever the repository's
``config`` says — includes, signature verification, drivers, helpers, an ``alternateRefsCommand``
— git never opens that file.

A shadow is made once per repository per process (``foreign``) and reused: a mirror does not
change under a run. Its allow-listed values are read with ``git config --file``, which parses a
file and runs nothing. A repository whose refs are in a format this does not copy (reftable)
is refused, saying so.
"""

from __future__ import annotations

import atexit
import functools
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from . import hostgit

REF_BYTES = 1 << 10  # a loose ref: a hash or a symbolic ref
PACKED_REFS_BYTES = 256 << 20  # a mirror with every pull request's refs stays well under
REFS_MAX = 200_000
_NAME = re.compile(r"^[A-Za-z0-9._/@+-]+$")
_HASH = re.compile(rb"^(?:[0-9a-f]{40}|[0-9a-f]{64})\n?$")
_SYMBOLIC = re.compile(rb"^ref: refs/[A-Za-z0-9._/@+-]+\n?$")
_ALLOWED = (
    ("core.repositoryformatversion", r"^[01]$"),
    ("extensions.objectformat", r"^sha(1|256)$"),
)


class ForeignRepositoryError(Exception):
    """The path is not a repository host git can read this way; the message says why."""


@dataclass(frozen=True)
class Foreign:
    """A foreign repository, read through ``shadow``."""

    root: Path  # the repository as it was named
    git_dir: Path  # its own git directory
    shadow: Path  # the harness's git directory reading it

    @property
    def env(self) -> dict[str, str]:
        return {
            "GIT_DIR": str(self.shadow),
            "GIT_OBJECT_DIRECTORY": str(self.git_dir / "objects"),
        }

    def run(
        self,
        args: Sequence[str],
        *,
        error: Callable[[str], Exception],
        stdin: bytes | str | None = None,
        ok: Container[int] = (0,),
        env: Mapping[str, str] | None = None,
    ) -> hostgit.Result:
        """``git args`` on this repository (``hostgit.run``, its configuration unread)."""
        return hostgit.run(
            args,
            cwd=self.shadow,
            error=error,
            env={**self.env, **(env or {})},
            stdin=stdin,
            ok=ok,
        )


_SHADOWS: dict[str, Foreign] = {}


def foreign(repo: Path) -> Foreign:
    """The shadow of the repository at ``repo`` (a work tree or a bare repository), made on
    first use in this process; ``ForeignRepositoryError`` when it is none."""
    git_dir = _git_dir(Path(repo))
    key = os.path.realpath(git_dir)
    found = _SHADOWS.get(key)
    if found is not None and found.shadow.is_dir():
        return found
    shadow = Path(tempfile.mkdtemp(prefix="toolpolicy-shadow-", dir=_root()))
    try:
        _make(git_dir, shadow)
    except BaseException:
        shutil.rmtree(shadow, ignore_errors=True)
        raise
    made = Foreign(Path(repo), git_dir, shadow)
    _SHADOWS[key] = made
    return made


def forget(repo: Path) -> None:
    """Drop the shadow of ``repo``: the next ``foreign`` reads its refs anew."""
    try:
        key = os.path.realpath(_git_dir(Path(repo)))
    except ForeignRepositoryError:
        return
    found = _SHADOWS.pop(key, None)
    if found is not None:
        shutil.rmtree(found.shadow, ignore_errors=True)


@functools.cache
def _root() -> str:
    root = tempfile.mkdtemp(prefix="toolpolicy-shadows-")
    atexit.register(shutil.rmtree, root, True)
    return root


def _git_dir(repo: Path) -> Path:
    """The repository's own git directory: ``repo/.git`` (a directory, or a ``gitdir:`` file),
    or ``repo`` itself when it is bare."""
    dotgit = repo / ".git"
    try:
        mode = os.lstat(dotgit).st_mode
    except OSError:
        mode = 0
    if stat.S_ISDIR(mode):
        candidate = dotgit
    elif stat.S_ISREG(mode):
        text = dotgit.read_bytes()[:4096].decode("utf-8", errors="replace").strip()
        if not text.startswith("gitdir: "):
            raise ForeignRepositoryError(f"{dotgit}: not a gitdir file")
        candidate = (repo / text[len("gitdir: ") :]).resolve()
    else:
        candidate = repo
    if not ((candidate / "objects").is_dir() and (candidate / "HEAD").is_file()):
        raise ForeignRepositoryError(f"not a git repository: {repo}")
    return candidate


def _make(git_dir: Path, shadow: Path) -> None:
    config = git_dir / "config"
    values = {}
    for key, pattern in _ALLOWED:
        value = _config_value(config, key) if config.is_file() else ""
        if value and not re.match(pattern, value):
            raise ForeignRepositoryError(f"{git_dir}: {key} = {value!r} is not one this reads")
        values[key] = value
    if config.is_file() and _config_value(config, "extensions.refstorage") not in ("", "files"):
        raise ForeignRepositoryError(f"{git_dir}: its refs are not files (reftable)")
    lines = ["[core]", f"\trepositoryformatversion = {values['core.repositoryformatversion'] or 0}"]
    lines.append("\tbare = true")
    if values["extensions.objectformat"]:
        lines += ["[extensions]", f"\tobjectformat = {values['extensions.objectformat']}"]
    (shadow / "config").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (shadow / "objects").mkdir()  # git checks the directory; GIT_OBJECT_DIRECTORY is read
    (shadow / "refs").mkdir()
    head = _small(git_dir / "HEAD", REF_BYTES)
    if head is None or not (_HASH.match(head) or _SYMBOLIC.match(head)):
        raise ForeignRepositoryError(f"{git_dir}/HEAD is neither a commit nor a symbolic ref")
    (shadow / "HEAD").write_bytes(head)
    for name in ("packed-refs", "shallow"):
        data = _small(git_dir / name, PACKED_REFS_BYTES)
        if data is not None:
            (shadow / name).write_bytes(data)
    _copy_refs(git_dir / "refs", shadow / "refs")
    hostgit.neutralize_attributes(shadow)


def _config_value(config: Path, key: str) -> str:
    """One value of a config file, parsed by git without running anything (no includes)."""
    result = hostgit.run(  # outside any repository: the file is all git reads
        ["config", "--file", str(config), "--no-includes", "--get", key],
        cwd=Path(_root()),
        error=ForeignRepositoryError,
        ok=range(256),
    )
    return result.text.strip().lower() if result.returncode == 0 else ""


def _small(path: Path, cap: int) -> bytes | None:
    """A regular file's bytes (never through a link), or None when there is none."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(info.st_mode):
        raise ForeignRepositoryError(f"{path}: not a regular file")
    if info.st_size > cap:
        raise ForeignRepositoryError(f"{path}: over {cap} bytes")
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as handle:
        return handle.read(cap + 1)[:cap]


def _copy_refs(source: Path, target: Path) -> None:
    """Every loose ref under ``source`` (a hash or a symbolic ref in a regular file with a
    plain name) into ``target``; links, odd names and other content are left out."""
    count = 0
    for directory, dirs, files in os.walk(source, followlinks=False):
        rel = Path(directory).relative_to(source)
        dirs[:] = [d for d in dirs if _NAME.match(d) and not os.path.islink(Path(directory) / d)]
        for name in files:
            count += 1
            if count > REFS_MAX:
                raise ForeignRepositoryError(f"{source}: over {REFS_MAX} loose refs")
            if not _NAME.match(name):
                continue
            try:
                data = _small(Path(directory) / name, REF_BYTES)
            except ForeignRepositoryError:
                continue
            if data is None or not (_HASH.match(data) or _SYMBOLIC.match(data)):
                continue
            (target / rel).mkdir(parents=True, exist_ok=True)
            (target / rel / name).write_bytes(data)
