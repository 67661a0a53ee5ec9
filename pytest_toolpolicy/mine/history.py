"""A repository's first-parent history as candidate changes, read with git on the host.

A change is a commit on the first-parent line, diffed against its first parent: a single
commit, or a merge's whole first-parent diff (a squashed pull request). Every git call goes
through ``hostgit`` (no hook, filter, textconv or external diff of the repository's runs), and
the repository is read through its object store alone: nothing is checked out here, and none
of its configuration is read (a git directory of the harness's own reads its refs and objects).

A change is a candidate when it touches both test files and other files, 1 to 15 files in all
(SWE-bench's and SWE-rebench's filter); ``candidate_reason`` says why one is not.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..grading.guard import is_test_path
from ..primitives.foreign import ForeignRepositoryError, foreign
from .project_version import declared_version, major_minor

MAX_FILES = 15
MAX_FILE_BYTES = 2**20  # a source or test file larger than this is data, not a change to mine
MAX_BRANCH = 20  # commit messages of a merged branch read for its statement
# A commit object (its message, nearly all of it) larger than this is not read; a message is
# kept to its first MAX_MESSAGE_CHARS (the longest SWE-bench Verified statement is 24,770).
MAX_COMMIT_BYTES = 4 << 20
MAX_MESSAGE_CHARS = 50_000
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_FIELD = "\x1f"  # between the fields of one commit's header line
_DIFF = ["diff", "--no-ext-diff", "--no-textconv", "--no-renames", "--no-color", "--binary"]


class MineError(Exception):
    """git could not read the repository as asked; the message says how."""


@dataclass(frozen=True)
class Change:
    commit: str
    parent: str
    created_at: str  # the commit's committer date, ISO 8601 (when it landed)
    message: str  # the whole commit message
    files: tuple[str, ...]  # every path the change touches, sorted
    merge: bool
    # a merge's branch: the messages of the commits it brings in (merges left out), oldest
    # first, at most MAX_BRANCH of them; () for a single commit
    branch: tuple[str, ...] = ()
    largest: int = 0  # bytes of the largest file version the change touches (either side)

    @property
    def tests(self) -> tuple[str, ...]:
        return tuple(f for f in self.files if is_test_path(f))

    @property
    def code(self) -> tuple[str, ...]:
        return tuple(f for f in self.files if not is_test_path(f))


def _git(
    repo: Path, args: Sequence[str], ok: tuple[int, ...] = (0,), stdin: str | None = None
) -> str:
    """git on the repository being mined, through a git directory of the harness's own: none
    of the repository's configuration is read (``primitives/foreign.py``)."""
    try:
        source = foreign(repo)
    except ForeignRepositoryError as exc:
        raise MineError(str(exc)) from None
    return source.run(list(args), error=MineError, ok=ok, stdin=stdin).text


def commits(
    repo: Path,
    rev: str = "HEAD",
    *,
    since: str | None = None,
    until: str | None = None,
    limit: int | None = None,
    paths: Sequence[str] = (),
) -> list[str]:
    """First-parent commits of ``rev`` (a commit or a range as ``git rev-list`` reads it:
    ``A..B``, ``X^..X``), newest first, with at least one parent."""
    if rev.startswith("-"):
        raise MineError(f"not a revision: {rev!r}")
    argv = ["rev-list", "--first-parent", "--min-parents=1"]
    argv += [f"--since={since}"] if since else []
    argv += [f"--until={until}"] if until else []
    argv += [f"--max-count={limit}"] if limit else []
    argv += [rev, "--", *paths]
    return _git(repo, argv).split()


def change(repo: Path, commit: str) -> Change:
    """The change ``commit`` makes to its first parent."""
    head = _git(repo, ["show", "-s", f"--format=%H{_FIELD}%P{_FIELD}%cI", commit]).strip()
    full, parents, date = head.split(_FIELD)
    size = int(_git(repo, ["cat-file", "-s", full]).strip() or 0)
    if size > MAX_COMMIT_BYTES:  # the message is most of a commit object: never read whole
        raise MineError(
            f"commit {full[:12]} is {size / 2**20:.1f} MiB (its message; more than"
            f" {MAX_COMMIT_BYTES / 2**20:g} MiB): not read"
        )
    message = _git(repo, ["show", "-s", "--format=%B", commit])
    names = _git(repo, [*_DIFF[:5], "--name-only", "-z", f"{full}^1", full])
    files = tuple(sorted(n for n in names.split("\0") if n))
    first, *others = parents.split()
    largest = _largest_blob(repo, first, full)
    branch: tuple[str, ...] = ()
    if others:
        log = [
            "log",
            "--no-merges",
            f"--max-count={MAX_BRANCH}",
            "--format=%B%x00",
            f"{first}..{full}",
        ]
        texts = [t.strip()[:MAX_MESSAGE_CHARS] for t in _git(repo, log).split("\0") if t.strip()]
        branch = tuple(reversed(texts))
    text = message.strip()[:MAX_MESSAGE_CHARS]
    return Change(full, first, date, text, files, bool(others), branch, largest)


def candidate_reason(change: Change) -> str | None:
    """Why ``change`` is not a candidate, or None."""
    if not change.tests:
        return "touches no test file"
    if not change.code:
        return "touches test files only"
    if len(change.files) > MAX_FILES:
        return f"touches {len(change.files)} files (more than {MAX_FILES})"
    odd = [f for f in change.files if _CONTROL.search(f)]
    if odd:
        return (
            f"a path with a control character ({odd[0]!r}): no test runner can be told it"
            " as one argument it reads the same way"
        )
    if change.largest > MAX_FILE_BYTES:
        return (
            f"touches a file of {change.largest / 2**20:.1f} MiB (more than"
            f" {MAX_FILE_BYTES / 2**20:g} MiB): no diff of it is read"
        )
    return None


def _largest_blob(repo: Path, parent: str, commit: str) -> int:
    """The size of the largest blob on either side of the change, read from git's object
    headers (``cat-file --batch-check``) before any diff of it is: a change that adds a huge
    file is dropped without its contents ever being loaded."""
    tree = _git(repo, ["diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", parent, commit])
    blobs = {
        oid
        for header in tree.split("\0")
        if header.startswith(":")
        for oid in header.split()[2:4]
        if oid.strip("0")  # the all-zero id: no file on that side
    }
    if not blobs:
        return 0
    found = _git(repo, ["cat-file", "--batch-check=%(objectsize)"], stdin="\n".join(blobs) + "\n")
    return max((int(n) for n in found.split() if n.isdigit()), default=0)


def patches(repo: Path, change: Change) -> tuple[str, str]:
    """(patch, test_patch): the change's diff of its non-test files and of its test files."""

    def diff(paths: Sequence[str]) -> str:
        return _git(repo, [*_DIFF, change.parent, change.commit, "--", *paths])

    return diff(change.code), diff(change.tests)


def version(repo: Path, commit: str, names: Sequence[str] = ()) -> tuple[str, str]:
    """(version, the environment's setup commit) for ``commit``, as ``major.minor`` (SWE-bench's
    versions): the version the project declares at that commit (``project_version.py``), else
    the nearest tag reachable from it (what setuptools_scm and versioneer derive theirs from),
    else "0.0". The setup commit is that tag's commit where its version agrees, else ``commit``
    itself (an environment built at the commit)."""
    tag = _git(repo, ["describe", "--tags", "--abbrev=0", commit], ok=(0, 128)).strip()
    tagged = _git(repo, ["rev-list", "-n", "1", f"refs/tags/{tag}"]).strip() if tag else ""
    listing = _git(repo, ["ls-tree", "-r", "-z", "--name-only", commit])
    files = {p for p in listing.split("\0") if p}

    def read(path: str) -> str | None:
        data = _git(repo, ["cat-file", "-s", f"{commit}:{path}"], ok=(0, 128)).strip()
        if not data.isdigit() or int(data) > MAX_FILE_BYTES:
            return None
        return _git(repo, ["cat-file", "blob", f"{commit}:{path}"])

    declared = declared_version(files, read, names)
    found = major_minor(declared) if declared else None
    if found is None:
        return (major_minor(tag) or tag, tagged) if tag else ("0.0", commit)
    return found, (tagged if tag and major_minor(tag) == found else commit)
