"""An instance as a fresh ``Workspace`` at its base commit, one per test item.

Every instance takes one path: a mirror, a cached checkout of the commit, a shared clone per
item. A real repository's mirror is a local one, ``DIR/<owner>__<name>`` (bare or not), or a
bare clone of ``https://github.com/<repo>.git``; a bundled project's is a bare repository
imported from its stream (``bundled_repos``), cached under ``repos/`` by the stream's content
hash, so an edited stream is imported anew.

**Nothing after the starting point.** A mirror holds the whole history, the upstream fix
among it (and a bundled project's next instance starts from this one's fix). So the checkout
cached per (repo, commit), under ``$TOOLPOLICY_CACHE_DIR/repos/<mirror>/history/<commit>``
(default ``~/.cache/pytest-toolpolicy``), is not a clone of the mirror but a new repository
into which only the commit and its ancestry are fetched, plus the tags that point into that
history and are no newer than the commit (the tags SWE-bench's images keep, so ``git
describe`` and versioneer's ``git rev-list --count HEAD`` read as there). It has no branch, no
remote, no reflog of the mirror's and no ``FETCH_HEAD``: ``git cat-file --batch-all-objects``
in it lists the past and nothing else. This is the leak SWE-bench closed in 4.1.0.

Each item gets ``git clone --shared`` of that checkout. A shared clone rather than ``git
worktree add``: worktrees share refs with their main repository, so one item's checkpoint refs
(``refs/toolpolicy/...``) would be visible to, and could collide with, another's; a shared
clone has its own refs, index and HEAD while borrowing the objects through ``alternates``
(nothing copied but the files), and what it borrows is the checkout's ancestry-only store.
Cache entries (mirrors and checkouts) are built in a temporary directory and renamed into
place, so concurrent workers materializing the same (repo, commit) both succeed (one rename
wins, the other is discarded).

git runs through ``hostgit`` (scrubbed environment, program-running config off, a timeout);
only a clone from the URL template may use https. A leftover item directory is removed
whatever the sandbox left in it: links are removed, never followed, and directories it made
unreadable or unwritable (mode 000) are opened up first.
"""

from __future__ import annotations

import contextlib
import hashlib
import tempfile
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..paths import cache_dir as default_cache_dir
from ..primitives import hostgit
from ..primitives.foreign import Foreign, ForeignRepositoryError, foreign
from ..primitives.safefs import remove_tree
from ..primitives.workspace import Workspace
from . import bundled_repos

if TYPE_CHECKING:
    from .instance import Instance

GITHUB_URL = "https://github.com/{repo}.git"
# Under a mirror's cache directory: the ancestry-only checkouts, one per commit.
HISTORY = "history"


class WorkspaceSetupError(Exception):
    """An instance could not be materialized; the message names the instance and the cause."""

    def __init__(self, instance_id: str, message: str) -> None:
        super().__init__(f"{instance_id}: {message}")
        self.instance_id = instance_id


def mirror_name(repo: str) -> str:
    """``psf/requests`` -> ``psf__requests``: the mirror directory and cache key of a repo."""
    return repo.replace("/", "__")


def cache_root(cache_dir: Path | None = None) -> Path:
    return Path(cache_dir or default_cache_dir()).expanduser() / "repos"


def materialize(
    instance: Instance,
    parent: Path,
    *,
    repos: Path | None = None,
    cache_dir: Path | None = None,
    url_template: str = GITHUB_URL,
    name: str | None = None,
) -> Workspace:
    """A new workspace directory under ``parent`` holding ``instance`` at its base commit:
    ``parent/name`` when a name is given (replacing what was there; a run that must see the
    same paths every time, as the A/B does), else a fresh unique directory."""
    parent.mkdir(parents=True, exist_ok=True)
    if name is not None:
        root = parent / name
        remove_tree(root, within=parent)
        root.mkdir()
    else:
        root = Path(tempfile.mkdtemp(prefix=f"{mirror_name(instance.instance_id)}-", dir=parent))
    try:
        checkout = cached_checkout(
            instance, repos=repos, cache_dir=cache_dir, url_template=url_template
        )
        # The checkout holds the base commit's past and nothing else; the clone takes its tags
        # (all of them point into that past) and no remote.
        _git(
            instance,
            ["clone", "-q", "--shared", "--no-checkout", str(checkout), str(root)],
            cwd=parent,
        )
        _git(instance, ["remote", "remove", "origin"], cwd=root)
        hostgit.neutralize_attributes(root / ".git")
        _git(instance, ["checkout", "-q", "--detach", instance.base_commit], cwd=root)
        return Workspace(root, base=instance.base_commit)
    except BaseException:
        with contextlib.suppress(OSError):
            remove_tree(root, within=parent)
        raise


def cached_checkout(
    instance: Instance,
    *,
    repos: Path | None = None,
    cache_dir: Path | None = None,
    url_template: str = GITHUB_URL,
    commit: str | None = None,
) -> Path:
    """The cached checkout of the instance's repo at ``commit`` (default: ``base_commit``; an
    environment is built at ``environment_setup_commit``), built on first use."""
    commit = commit or instance.base_commit
    what = "base commit" if commit == instance.base_commit else "environment setup commit"
    entry = cache_root(cache_dir) / mirror_name(instance.repo) / HISTORY / commit
    if (entry / ".git").is_dir():
        return entry
    source = _source(instance, repos, cache_dir, url_template)
    mirror = _foreign(instance, source)
    if _read(instance, mirror, ["cat-file", "-t", f"{commit}^{{commit}}"], ok=True).returncode:
        if instance.path is not None:
            stream = bundled_repos.stream_path(instance.path, instance.repo)
            where = f"{stream} (imported to {source}): the stream and instance.json disagree"
        elif repos:
            where = f"mirror {source}"
        else:
            where = f"clone of {url_template.format(repo=instance.repo)}"
        raise WorkspaceSetupError(instance.instance_id, f"{what} {commit} not found in {where}")

    def build(tmp: Path) -> None:
        tmp.mkdir()
        _git(instance, ["init", "-q", str(tmp)], cwd=tmp.parent)
        _git(instance, ["config", "gc.auto", "0"], cwd=tmp)  # shared clones borrow its objects
        hostgit.neutralize_attributes(tmp / ".git")
        tags = _past_tags(instance, mirror, commit)
        # The objects of the commit's ancestry and of those tags, packed straight into the new
        # repository (deltas reused: no recompression). A blob the mirror lacks (a snapshot
        # service leaves out large files) is skipped here and named by ``_complete`` when the
        # commit's own tree needs it.
        revs = "".join(f"{r}\n" for r in (commit, *(name for name, _ in tags)))
        pack = tmp / ".git" / "objects" / "pack" / "pack"
        packing = ["pack-objects", "-q", "--revs", "--missing=allow-any", str(pack)]
        _read(instance, mirror, packing, stdin=revs)
        updates = "".join(f"create {name} {oid}\n" for name, oid in tags)
        if updates:
            _git(instance, ["update-ref", "--stdin"], cwd=tmp, stdin=updates)
        _complete(instance, tmp, commit, source)
        _git(instance, ["checkout", "-q", "--detach", commit], cwd=tmp)

    return _publish(entry, build)


def _past_tags(instance: Instance, mirror: Foreign, commit: str) -> list[tuple[str, str]]:
    """(name, object) of each tag of the mirror a checkout of ``commit`` keeps: those whose
    commit is in its ancestry and no newer than it (SWE-bench's rule, by the tagged commit's
    committer date)."""
    fields = "%(refname)%00%(objectname)%00%(*committerdate:unix)%(committerdate:unix)"
    listing = _read(
        instance, mirror, ["for-each-ref", f"--merged={commit}", f"--format={fields}", "refs/tags"]
    ).text
    when = _read(instance, mirror, ["show", "-s", "--format=%ct", commit]).text
    limit = int(when.strip()) if when.strip().isdigit() else None
    kept = []
    for line in listing.splitlines():
        name, _, rest = line.partition("\0")
        oid, _, stamp = rest.partition("\0")
        # Names go back to git on its standard input, one a line: nothing odd in them.
        if not name.startswith("refs/tags/") or any(c in name for c in "\n\r\t :^~?*[\\"):
            continue
        if limit is None or not stamp.isdigit() or int(stamp) <= limit:
            kept.append((name, oid))
    return kept


def _foreign(instance: Instance, source: Path) -> Foreign:
    """The mirror as host git reads it: through a git directory of the harness's own, none of
    the mirror's configuration read (``primitives/foreign.py``)."""
    try:
        return foreign(source)
    except ForeignRepositoryError as exc:
        raise WorkspaceSetupError(instance.instance_id, f"the mirror {source}: {exc}") from None


def _read(
    instance: Instance,
    mirror: Foreign,
    args: list[str],
    *,
    stdin: str | None = None,
    ok: bool = False,
) -> hostgit.Result:
    """git on the mirror; a failure a ``WorkspaceSetupError`` in git's words (``ok``: the
    result whatever the exit code)."""
    return mirror.run(
        args,
        error=lambda message: WorkspaceSetupError(instance.instance_id, message),
        stdin=stdin,
        ok=range(256) if ok else (0,),
    )


def _complete(instance: Instance, checkout: Path, commit: str, source: Path) -> None:
    """A mirror may lack blobs (a partial clone, or a snapshot service that leaves out files
    over a size): packing skips them, and the checkout would lack those files, so each item's
    snapshot fails later. A commit whose own tree needs a blob the checkout's store lacks is an
    infrastructure error naming the files, here, before anything is checked out."""

    def error(message: str) -> WorkspaceSetupError:
        return WorkspaceSetupError(instance.instance_id, message)

    listing = hostgit.run(["ls-tree", "-r", "-z", commit], cwd=checkout, error=error).text
    blobs: dict[str, list[str]] = {}
    for entry in filter(None, listing.split("\0")):
        meta, _, path = entry.partition("\t")
        kind_oid = meta.split(" ")
        if len(kind_oid) == 3 and kind_oid[1] == "blob":
            blobs.setdefault(kind_oid[2], []).append(path)
    if not blobs:
        return
    asked = "".join(f"{oid}\n" for oid in blobs)
    found = hostgit.run(
        ["cat-file", "--batch-check=%(objectname) %(objecttype)", "--buffer"],
        cwd=checkout,
        error=error,
        stdin=asked,
    ).text
    missing = sorted(
        path
        for line in found.splitlines()
        if line.endswith(" missing")
        for path in blobs.get(line.split(" ", 1)[0], [])
    )
    if missing:
        raise WorkspaceSetupError(
            instance.instance_id,
            f"the mirror {source} lacks the contents of {len(missing)} file(s) of commit "
            f"{commit[:12]} ({', '.join(missing[:3])}): an incomplete mirror (a partial "
            "clone?); fetch the missing objects into it (git fetch --refetch) or mirror it "
            "again in full",
        )


def _source(instance: Instance, repos: Path | None, cache_dir: Path | None, url: str) -> Path:
    if instance.path is not None:
        return _bundled_mirror(instance, cache_dir)
    if repos is not None:
        mirror = Path(repos) / mirror_name(instance.repo)
        if not mirror.is_dir():
            raise WorkspaceSetupError(
                instance.instance_id, f"no mirror for {instance.repo} at {mirror}"
            )
        return mirror
    bare = cache_root(cache_dir) / f"{mirror_name(instance.repo)}.git"
    if bare.is_dir():
        return bare
    remote = url.format(repo=instance.repo)
    clone = ["clone", "-q", "--bare", remote]
    return _publish(
        bare, lambda tmp: _git(instance, [*clone, str(tmp)], cwd=tmp.parent, network=True)
    )


def _bundled_mirror(instance: Instance, cache_dir: Path | None) -> Path:
    """The bare repository imported from the instance's project stream."""
    stream = bundled_repos.stream_path(Path(instance.path or ""), instance.repo)
    try:
        data = stream.read_bytes()
    except OSError as exc:
        why = exc.strerror or exc
        raise WorkspaceSetupError(
            instance.instance_id, f"cannot read the bundled repository {stream}: {why}"
        ) from None
    digest = hashlib.sha256(data).hexdigest()[:16]
    entry = cache_root(cache_dir) / f"{mirror_name(instance.repo)}-{digest}.git"
    if entry.is_dir():
        return entry

    def error(message: str) -> WorkspaceSetupError:
        return WorkspaceSetupError(instance.instance_id, f"cannot import {stream}: {message}")

    return _publish(entry, lambda tmp: bundled_repos.import_stream(data, tmp, error))


def _publish(entry: Path, build: Callable[[Path], object]) -> Path:
    """Build into a private temporary directory, then rename it into place atomically."""
    entry.parent.mkdir(parents=True, exist_ok=True)
    tmp = entry.parent / f".tmp-{entry.name}-{uuid.uuid4().hex[:8]}"
    try:
        build(tmp)
        try:
            tmp.rename(entry)
        except OSError:
            if not entry.is_dir():  # not a lost race: a real failure
                raise
    finally:
        with contextlib.suppress(OSError):
            remove_tree(tmp, within=entry.parent)
    return entry


def _git(
    instance: Instance,
    args: list[str],
    cwd: Path,
    ok: int = 0,
    network: bool = False,
    stdin: str | None = None,
) -> int:
    """Run git; a failure becomes a ``WorkspaceSetupError`` in git's own (shortened) words.
    ``ok=1`` returns the exit code instead of raising."""
    protocols: Sequence[str] = ("file", "https") if network else ("file",)
    result = hostgit.run(
        args,
        cwd=cwd,
        error=lambda message: WorkspaceSetupError(instance.instance_id, message),
        ok=range(256) if ok else (0,),
        protocols=protocols,
        stdin=stdin,
    )
    return result.returncode
