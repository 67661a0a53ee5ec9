"""A workspace: a directory under git, with private checkpoints and a gradable patch.

HEAD stays on the base commit for the whole run. Checkpoints are commits on private refs
(``refs/toolpolicy/...``) built through a private index file, so neither the user's branch nor
their index is touched, and ``patch()`` is always the diff against the base.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

_IDENTITY = {
    "GIT_AUTHOR_NAME": "toolpolicy",
    "GIT_AUTHOR_EMAIL": "toolpolicy@localhost",
    "GIT_COMMITTER_NAME": "toolpolicy",
    "GIT_COMMITTER_EMAIL": "toolpolicy@localhost",
    # Fixed dates keep checkpoint ids a function of content only.
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000",
}


class WorkspaceError(Exception):
    """A git operation on the workspace failed; the message carries git's own words."""


class Workspace:
    """A git working tree whose base commit is fixed when it is opened."""

    def __init__(self, root: str | os.PathLike[str], base: str | None = None) -> None:
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise WorkspaceError(f"workspace directory not found: {root}")
        if not (self.root / ".git").exists():
            raise WorkspaceError(f"not a git repository: {self.root} (use Workspace.create)")
        self._index = self._git_dir() / "toolpolicy-index"
        self.base = self._git("rev-parse", "--verify", f"{base or 'HEAD'}^{{commit}}").strip()

    @classmethod
    def create(cls, root: str | os.PathLike[str], message: str = "base") -> Workspace:
        """Put an existing directory under git with everything in it as the base commit."""
        path = Path(root)
        if not (path / ".git").exists():
            _run(["git", "init", "-q", "-b", "main", str(path)], path)
            _run(["git", "add", "-A"], path)
            _run(["git", "commit", "-q", "--allow-empty", "-m", message], path)
        return cls(path)

    def _git_dir(self) -> Path:
        out = _run(["git", "rev-parse", "--absolute-git-dir"], self.root)
        return Path(out.strip())

    def _git(self, *args: str, private_index: bool = False, stdin: str | None = None) -> str:
        env = {"GIT_INDEX_FILE": str(self._index)} if private_index else {}
        return _run(["git", *args], self.root, env=env, stdin=stdin)

    def _snapshot_tree(self) -> str:
        """The working tree (tracked and untracked, not ignored) as a git tree id."""
        if not self._index.exists():
            self._git("read-tree", self.base, private_index=True)
        self._git("add", "-A", ".", private_index=True)
        return self._git("write-tree", private_index=True).strip()

    def advance_base(self, message: str) -> str:
        """Commit the working tree on HEAD and make that the base: what the agent starts from
        (e.g. with the judging tests made visible), so ``patch()`` holds only later changes."""
        tree = self._snapshot_tree()
        commit = self._git("commit-tree", tree, "-p", self.base, "-m", message).strip()
        self._git("update-ref", "HEAD", commit)
        self._git("read-tree", commit)  # the user's index follows HEAD
        self.base = commit
        return commit

    def tree_hash(self) -> str:
        """A content hash of the working tree: equal trees, equal hashes."""
        return self._snapshot_tree()

    def checkpoint(self, label: str | None = None) -> str:
        """Commit the working tree on a private ref; returns the ref name."""
        tree = self._snapshot_tree()
        commit = self._git("commit-tree", tree, "-p", self.base, "-m", "toolpolicy checkpoint")
        ref = f"refs/toolpolicy/checkpoints/{label or uuid.uuid4().hex[:12]}"
        self._git("update-ref", ref, commit.strip())
        return ref

    def restore(self, ref: str) -> None:
        """Make the working tree exactly the checkpointed tree (extra files are removed)."""
        commit = self._git("rev-parse", "--verify", f"{ref}^{{commit}}").strip()
        self._snapshot_tree()
        # read-tree -u moves the private index and the files together, deleting files the
        # target lacks; clean then drops untracked leftovers the private index never saw.
        self._git("read-tree", "-u", "--reset", commit, private_index=True)
        env = {"GIT_INDEX_FILE": str(self._index)}
        _run(["git", "clean", "-fdq"], self.root, env=env)

    def patch(self) -> str:
        """The diff of the working tree against the base commit, ready to ``git apply``."""
        tree = self._snapshot_tree()
        return self._git("diff", "--no-color", "--no-ext-diff", "--full-index", self.base, tree)

    def changed_files(self) -> list[str]:
        tree = self._snapshot_tree()
        return self._git("diff", "--name-only", self.base, tree).splitlines()

    def changed_between(self, tree_a: str, tree_b: str) -> list[str]:
        """Paths that differ between two trees (or commits) of this repository."""
        return self._git("diff", "--name-only", "--no-renames", tree_a, tree_b).splitlines()

    def contains(self, path: str | os.PathLike[str]) -> bool:
        """Whether ``path`` (relative to the root, or absolute) resolves inside the workspace."""
        target = (self.root / path).resolve()
        return target == self.root or self.root in target.parents


def _run(
    argv: list[str], cwd: Path, env: dict[str, str] | None = None, stdin: str | None = None
) -> str:
    full_env = {**os.environ, **_IDENTITY, **(env or {})}
    proc = subprocess.run(
        argv, cwd=cwd, env=full_env, input=stdin, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise WorkspaceError(f"{' '.join(argv[:3])} failed: {proc.stderr.strip()[:500]}")
    return proc.stdout
