"""The tree grading runs the tests in, built in git from a snapshot of the workspace.

Starting from the snapshot (what the model left, exactly as ``Workspace.checkpoint`` stores
it), every path ``guard.py`` names is put back as it is at the instance's base commit (a path
the base lacks is dropped), then every file the listed tests live in and every file
``test_patch`` touches too, and ``test_patch`` is applied. All of it happens in a private index
(``git update-index --replace``, ``git apply --cached``): git, not a walk of the working tree,
decides what a path is, so a link the model put where a test directory was is simply replaced.
The result is checked out exactly (``Workspace.restore`` with ignored files dropped: a file the
model hid from the snapshot with a ``.gitignore`` of its own does not take part either).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..primitives.workspace import Workspace, WorkspaceError
from .guard import Guarded, guard
from .testids import path_of


class TreeError(Exception):
    """``test_patch`` does not apply to the base commit's test files; git's words."""


@dataclass(frozen=True)
class GradingTree:
    commit: str  # the tree to grade, as a commit on the base
    guarded: Guarded
    base_files: frozenset[str]  # every path at the base commit
    files: frozenset[str]  # every path of the tree to grade
    test_patch_files: frozenset[str]
    changed: tuple[str, ...]  # what the snapshot changed against what the agent started from
    # The base commit with test_patch and nothing of the agent's: the control run's tree.
    control: str
    control_files: frozenset[str]
    commit_tree: str  # the tree ids of ``commit`` and ``control``: equal when nothing of the
    control_tree: str  # agent's is left to grade


def patch_files(patch: str) -> set[str]:
    """The paths a unified diff names (both sides of each ``diff --git`` line)."""
    found = set()
    for a, b in re.findall(r"^diff --git a/(\S+) b/(\S+)$", patch, flags=re.MULTILINE):
        found |= {a, b}
    return found


def grading_tree(
    workspace: Workspace,
    snapshot: str,
    base: str,
    test_patch: str,
    ids: Sequence[str],
    *,
    repo_paths: Sequence[str],
    installed: Collection[str],
    runner_files: Collection[str] = (),
) -> GradingTree:
    """The tree to grade the ``snapshot`` (a commit) of ``workspace`` in (see the module)."""
    base_files = _files(workspace, base)
    now_files = _files(workspace, snapshot)
    # The agent's doing: against what it started from (the base commit, with test_patch where
    # the tests were visible), not against the base commit.
    changed = tuple(workspace.changed_between(workspace.base, snapshot))
    tp_files = patch_files(test_patch)
    # The listed tests' files, the files test_patch touches, and the test runner's own.
    tests = {path_of(i) for i in ids} | tp_files | set(runner_files)
    roots = ["", *repo_paths, *_test_roots(tests, now_files | base_files)]

    def read(commit: str, files: frozenset[str]) -> Callable[[str], bytes | None]:
        def reader(path: str) -> bytes | None:
            if path not in files:
                return None
            return workspace.git("cat-file", "blob", f"{commit}:{path}").stdout

        return reader

    guarded = guard(
        changed,
        base=read(base, base_files),
        now=read(snapshot, now_files),
        test_files=tests,
        roots=list(dict.fromkeys(roots)),
        installed=installed,
        base_files=base_files,
    )
    back = sorted(set(guarded.paths) | tests)
    tree = _tree(workspace, snapshot, base, back, base_files, test_patch)
    control = _tree(workspace, base, base, [], base_files, test_patch)
    commit, control_commit = (_commit(workspace, t, base) for t in (tree, control))
    return GradingTree(
        commit,
        guarded,
        base_files,
        _files(workspace, commit),
        frozenset(tp_files),
        changed,
        control_commit,
        _files(workspace, control_commit),
        tree,
        control,
    )


def _tree(
    workspace: Workspace,
    start: str,
    base: str,
    back: Sequence[str],
    base_files: Collection[str],
    test_patch: str,
) -> str:
    """``start``'s tree with the paths ``back`` as at ``base`` and ``test_patch`` applied."""
    index = workspace.git_dir / f"toolpolicy-grade-index-{uuid.uuid4().hex[:8]}"
    try:
        workspace.git("read-tree", start, index=index)
        _put_back(workspace, index, base, back, base_files)
        if test_patch.strip():
            patch = test_patch if test_patch.endswith("\n") else test_patch + "\n"
            applied = workspace.git(
                "apply", "--cached", "--whitespace=nowarn", "-", stdin=patch, ok=range(256),
                index=index,
            )  # fmt: skip
            if applied.returncode:
                words = " ".join(applied.stderr.decode("utf-8", errors="replace").split())
                raise TreeError(words[:300] or "git apply failed")
        return workspace.git("write-tree", index=index).text.strip()
    finally:
        index.unlink(missing_ok=True)


def _commit(workspace: Workspace, tree: str, parent: str) -> str:
    return workspace.git("commit-tree", tree, "-p", parent, "-m", "toolpolicy grading").text.strip()


def _put_back(
    workspace: Workspace, index: Path, base: str, paths: Sequence[str], base_files: Collection[str]
) -> None:
    at_base = [p for p in paths if p in base_files]
    gone = [p for p in paths if p not in base_files]
    if at_base:
        listing = workspace.git("ls-tree", "-z", base, "--", *at_base).text
        entries = "".join(f"{line}\0" for line in listing.split("\0") if line)
        workspace.git("update-index", "--replace", "-z", "--index-info", stdin=entries, index=index)
    if gone:
        stdin = "".join(f"{p}\0" for p in gone)
        workspace.git("update-index", "--force-remove", "-z", "--stdin", stdin=stdin, index=index)


def _files(workspace: Workspace, commit: str) -> frozenset[str]:
    listing = workspace.git("ls-tree", "-r", "-z", "--name-only", commit).text
    return frozenset(filter(None, listing.split("\0")))


def _test_roots(tests: Collection[str], files: Collection[str]) -> list[str]:
    """Where pytest's default import mode puts each test file's directory on ``sys.path``:
    the first directory upward without an ``__init__.py``."""
    roots = []
    for test in sorted(tests):
        directory = PurePosixPath(test).parent
        while str(directory) != "." and f"{directory}/__init__.py" in files:
            directory = directory.parent
        roots.append("" if str(directory) == "." else str(directory))
    return roots


__all__ = ["GradingTree", "TreeError", "WorkspaceError", "grading_tree", "patch_files"]
