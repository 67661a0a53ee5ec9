"""A workspace: a directory under git, with private checkpoints and a gradable patch.

HEAD stays on the instance's commit for the whole run. Checkpoints are commits on private refs
(``refs/toolpolicy/...``) built through a private index file, so neither the user's branch nor
their index is touched, and ``patch()`` is always the diff against the base (the instance's
commit, or the harness's commit on it that the agent starts from: ``advance_base``).

The working tree is hostile: a model wrote into it. Every git call goes through ``hostgit``
(no config, hook, attribute driver or environment variable of the host or of a nested
repository takes effect), with ``GIT_DIR`` and ``GIT_WORK_TREE`` explicit, and only while
``.git`` is the directory (or file) and ``.git/config`` the bytes they were when the workspace
was opened: the sandbox mounts ``.git`` read-only, and this catches whatever else changed them.

A snapshot (tree hash, checkpoint, patch) is every file not ignored, links stored as links:
- a nested repository (a ``.git`` directory or file below the root) is snapshotted as its
  ordinary files, its ``.git`` left out (git cannot store a path named ``.git``), so the tree
  hash still covers all a test run can see. ``git add`` alone would record a committed nested
  repository as a bare gitlink and fail outright on one without commits, so each such
  directory first gets a placeholder entry in the index; git then walks it as an ordinary
  directory and drops the placeholder (``_MAX_NESTING`` levels of nesting at most);
- a FIFO, socket or device is never opened; at a tracked path it counts as a deletion;
- a path git refuses to store (such as ``.GIT/x``) is left out rather than failing the
  snapshot. ``restore`` removes untracked nested repositories whole, while a nested ``.git``
  inside a directory the checkpoint has is kept: it is not part of any snapshot.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import tempfile
import uuid
from collections.abc import Container, Iterator
from pathlib import Path

from .. import limits
from . import hostgit, safefs
from .envelope import HarnessFault
from .volatile import mask_workspace

_PLACEHOLDER = ".toolpolicy-nested-repository"
# What the agent starts from when it is not the instance's commit (``advance_base``).
START_REF = "refs/toolpolicy/start"
_MAX_NESTING = 16
# [ \t\r\f\v]*, not \s*: a run of blank lines must not be rescanned from every line start.
_INCLUDE = re.compile(rb"^[ \t\r\f\v]*\[\s*include", re.IGNORECASE | re.MULTILINE)


class WorkspaceError(HarnessFault):
    """A git operation on the workspace failed; the message carries git's own words. A
    host-side step, so a fault of the harness's where a tool meets it (never a tool result)."""


class Workspace:
    """A git working tree whose base commit is fixed when it is opened."""

    def __init__(self, root: str | os.PathLike[str], base: str | None = None) -> None:
        self._attach(root)
        self.base = self._git("rev-parse", "--verify", f"{base or 'HEAD'}^{{commit}}").strip()

    @classmethod
    def create(cls, root: str | os.PathLike[str], message: str = "base") -> Workspace:
        """Put an existing directory under git with everything in it as the base commit."""
        path = Path(root).resolve()
        if not os.path.lexists(path / ".git"):
            hostgit.run(["init", "-q", "-b", "main", str(path)], cwd=path, error=WorkspaceError)
            hostgit.neutralize_attributes(path / ".git")
            unborn = cls.__new__(cls)
            unborn._attach(path)
            tree = unborn._stage_tree(unborn._git_dir / "index")  # the user's index: the base
            commit = unborn._git("commit-tree", tree, "-m", message).strip()
            unborn._git("update-ref", "HEAD", commit)
        return cls(path)

    def _attach(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise WorkspaceError(f"workspace directory not found: {root}")
        mask_workspace(self.root)  # where it is never reaches a prompt (volatile.py)
        dotgit = self.root / ".git"
        if not os.path.lexists(dotgit):
            raise WorkspaceError(f"not a git repository: {self.root} (use Workspace.create)")
        self._git_dir = self._common_dir = dotgit
        if not dotgit.is_dir() and not dotgit.is_symlink():  # a linked worktree's gitfile
            out = hostgit.run(
                ["rev-parse", "--absolute-git-dir", "--git-common-dir"],
                cwd=self.root,
                error=WorkspaceError,
            ).text.splitlines()
            self._git_dir, self._common_dir = Path(out[0]), self.root / out[1]
        self._pin = self._fingerprint()
        self._stat = self._stat_pin()
        if _INCLUDE.search(self._pin):
            raise WorkspaceError(
                f"refusing {self.root}: its git config includes other files (include or "
                "includeIf), which the harness cannot pin against change"
            )
        self._index = self._git_dir / "toolpolicy-index"
        self._objects: dict[str, str] = {}  # set while objects go to a scratch store

    def _stat_pin(self) -> tuple[tuple[int, ...], ...]:
        """``.git``'s and the config's lstat signatures: while both are what they were when the
        content was pinned, the content is too (ctime moves with every change and cannot be set
        back from user space), so the check before a git call is two lstats, not two reads.
        A ``.git`` directory is pinned by kind and inode only: git itself changes its mtime."""
        out: list[tuple[int, ...]] = []
        for path in (self.root / ".git", self._common_dir / "config"):
            try:
                st = os.lstat(path)
            except OSError:
                out.append(())
                continue
            sig: tuple[int, ...] = (st.st_mode, st.st_ino, st.st_dev)
            if not stat.S_ISDIR(st.st_mode):
                sig += (st.st_size, st.st_mtime_ns, st.st_ctime_ns)
            out.append(sig)
        return tuple(out)

    def _fingerprint(self) -> bytes:
        """``.git``'s kind (and a gitfile's bytes) and the repository config, as they are now."""
        rel = ".git"
        try:
            mode = os.lstat(self.root / rel).st_mode
            if stat.S_ISLNK(mode):
                raise WorkspaceError(f"refusing to run git in {self.root}: .git is a symbolic link")
            cap = limits.current().read_bytes
            kind = b"dir" if stat.S_ISDIR(mode) else safefs.read_bytes(self.root, rel, cap)
            rel = "config"
            try:
                config = safefs.read_bytes(self._common_dir, rel, cap)
            except FileNotFoundError:
                config = b""
        except (OSError, safefs.UnsafePath) as exc:
            raise WorkspaceError(f"refusing to run git in {self.root}: {rel}: {exc}") from None
        return kind + b"\0" + config

    @property
    def git_dir(self) -> Path:
        """The repository's own directory (``.git``, or a linked worktree's), the harness's."""
        return self._git_dir

    def git(
        self,
        *args: str,
        stdin: bytes | str | None = None,
        ok: Container[int] = (0,),
        index: Path | None = None,
    ) -> hostgit.Result:
        """Run git in this workspace, the one safe way (``hostgit``), after checking that
        ``.git`` and its config are still what they were when the workspace was opened.
        ``index`` is the index file to use (default: the user's)."""
        if self._stat_pin() != self._stat and self._fingerprint() != self._pin:
            raise WorkspaceError(
                f"refusing to run git in {self.root}: .git or its config changed since the "
                "workspace was opened (they are the harness's; the sandbox keeps them read-only)"
            )
        env = {"GIT_DIR": str(self._git_dir), "GIT_WORK_TREE": str(self.root), **self._objects}
        if index is not None:
            env["GIT_INDEX_FILE"] = str(index)
        return hostgit.run(args, cwd=self.root, error=WorkspaceError, env=env, stdin=stdin, ok=ok)

    @contextlib.contextmanager
    def scratch_objects(self) -> Iterator[None]:
        """While inside, every object git writes goes to a private store outside the
        workspace (reading through the workspace's own), removed at the end: what the harness
        makes there (grading's trees, with tests the agent was not shown) never enters the
        store a later run in this workspace can read. No ref may be set inside: it would name
        an object that is about to go."""
        store = tempfile.mkdtemp(prefix="toolpolicy-objects-")
        self._objects = {
            "GIT_OBJECT_DIRECTORY": store,
            "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(self._common_dir / "objects"),
        }
        try:
            yield
        finally:
            self._objects = {}
            shutil.rmtree(store, ignore_errors=True)

    def _git(self, *args: str, index: Path | None = None, stdin: str | None = None) -> str:
        return self.git(*args, index=index, stdin=stdin).text

    def _stage(self, index: Path) -> None:
        """``git add -A`` of the whole tree into ``index``, with nested repositories and paths
        git cannot store handled as the module docstring says."""
        # The common case costs one walk: a trial `add -A` on a copy of the index, kept when
        # git had nothing to say. An embedded repository (recorded as a gitlink, with a
        # warning), a FIFO at a tracked path or a refused path all print something.
        trial = index.with_name(index.name + ".trial")
        for stale in (trial, *(i.with_name(i.name + ".lock") for i in (index, trial))):
            stale.unlink(missing_ok=True)  # left by a git killed at the time limit
        if index.exists():
            # copy2: the copy keeps the index's mtime. git trusts an entry's stat data (whole
            # seconds) only when the file is older than the index; a copy stamped "now" made a
            # file rewritten within the second of its last staging, at the same size, look
            # unchanged (a restore that left it, a tree hash that missed it).
            shutil.copy2(index, trial)
        first = self.git("add", "-A", ".", index=trial, ok=range(256))
        if first.returncode == 0 and not first.stderr:
            if trial.exists():  # git writes no index for an empty tree
                os.replace(trial, index)
            return
        trial.unlink(missing_ok=True)
        for _ in range(_MAX_NESTING):
            listing = self._git(
                "ls-files", "-z", "-t", "-o", "-m", "--exclude-standard", index=index
            )
            nested, special = [], []
            for entry in filter(None, listing.split("\0")):
                tag, path = entry[:1], entry[2:]
                if tag == "?" and path.endswith("/"):  # git lists a nested repository as `dir/`
                    nested.append(path)
                elif tag == "C" and _special(self.root / path):
                    special.append(path)
            if special:
                paths = "".join(f"{p}\0" for p in special)
                self._git(
                    "update-index", "--force-remove", "-z", "--stdin", index=index, stdin=paths
                )
            if not nested:
                break
            empty = self._git("hash-object", "-w", "--stdin", stdin="").strip()
            info = "".join(f"100644 {empty}\t{p}{_PLACEHOLDER}\0" for p in nested)
            self._git("update-index", "-z", "--index-info", index=index, stdin=info)
        # Exit 1 is a path git would not add (logged, left out); a real failure exits 128.
        self.git("add", "-A", "--ignore-errors", ".", index=index, ok=(0, 1))

    def _stage_tree(self, index: Path | None = None) -> str:
        """The working tree (tracked and untracked, not ignored) as a git tree id, staged in
        ``index`` (default: the private index, which starts from the base)."""
        if index is None:
            index = self._index
            if not index.exists():
                self._git("read-tree", self.base, index=index)
        self._stage(index)
        return self._git("write-tree", index=index).strip()

    def advance_base(self, message: str) -> str:
        """Commit the working tree on the base, on a private ref, and make that the base: what
        the agent starts from (e.g. with the judging tests made visible), so ``patch()`` holds
        only later changes. HEAD stays on the instance's commit, so what git reports of the
        history inside the workspace (``git rev-list --count HEAD``, ``git describe``) is what
        it reports there; the user's index holds the new tree (the harness's changes staged,
        the agent's own then the only unstaged ones)."""
        tree = self._stage_tree()
        commit = self._git("commit-tree", tree, "-p", self.base, "-m", message).strip()
        self._git("update-ref", START_REF, commit)
        self._git("read-tree", commit)
        self.base = commit
        return commit

    def tree_hash(self) -> str:
        """A content hash of the working tree: equal trees, equal hashes."""
        return self._stage_tree()

    def checkpoint(self, label: str | None = None) -> str:
        """Commit the working tree on a private ref; returns the ref name."""
        tree = self._stage_tree()
        commit = self._git("commit-tree", tree, "-p", self.base, "-m", "toolpolicy checkpoint")
        ref = f"refs/toolpolicy/checkpoints/{label or uuid.uuid4().hex[:12]}"
        self._git("update-ref", ref, commit.strip())
        return ref

    def restore(self, ref: str, *, ignored: bool = False) -> None:
        """Make the working tree exactly the checkpointed tree (extra files are removed; with
        ``ignored``, files ``.gitignore`` or ``info/exclude`` hide from snapshots too)."""
        commit = self._git("rev-parse", "--verify", f"{ref}^{{commit}}").strip()
        self._stage_tree()
        # read-tree -u moves the private index and the files together, deleting files the
        # target lacks; clean then drops untracked leftovers the private index never saw, and
        # (-ff) untracked nested repositories with them.
        self._git("read-tree", "-u", "--reset", commit, index=self._index)
        self._git("clean", "-ffdxq" if ignored else "-ffdq", index=self._index)

    def patch(self) -> str:
        """The diff of the working tree against the base commit, ready to ``git apply``."""
        tree = self._stage_tree()
        return self._git(
            "diff", "--no-color", "--no-ext-diff", "--no-textconv", "--full-index", self.base, tree
        )

    def changed_files(self) -> list[str]:
        return self.changed_between(self.base, self._stage_tree())

    def changed_between(self, tree_a: str, tree_b: str) -> list[str]:
        """Paths that differ between two trees (or commits) of this repository."""
        out = self._git("diff", "--name-only", "-z", "--no-renames", tree_a, tree_b)
        return [path for path in out.split("\0") if path]


def _special(path: Path) -> bool:
    """A FIFO, socket or device: git cannot store it (and opening a FIFO would block)."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISLNK(mode) or stat.S_ISDIR(mode))


def final_patch(workspace: Workspace | None) -> tuple[str, dict[str, str]]:
    """A run's patch for its trajectory, with the meta to record beside it: a workspace the
    host cannot snapshot any more (a git step past its time bound) ends its run with no patch
    and ``snapshot_error`` saying why, so the trajectory is still written and grading says the
    same of it, instead of the run being lost to the exception."""
    if workspace is None:
        return "", {}
    try:
        return workspace.patch(), {}
    except WorkspaceError as exc:
        return "", {"snapshot_error": str(exc)}
