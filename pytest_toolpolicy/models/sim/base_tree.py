"""The files the simulator plans its edits against: the tree the agent starts from.

A plan is a pure function of that tree and the gold patch, so it is cached by a key naming the
tree's content: the workspace's base commit (after the visible ``test_patch``, if any: exactly
what the agent's patch is diffed against), which any instance has, bundled or real. Files are
read from the commit, never from the working tree, which the run is changing meanwhile; git
runs through ``Workspace.git`` (``hostgit``), like every other host-side step on a workspace.
A plain directory (a test's own files, outside any run) is the other kind of tree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ...primitives.workspace import Workspace, WorkspaceError


class BaseTreeError(ValueError):
    """A file of the base tree cannot be read as text."""


@dataclass(frozen=True)
class BaseTree:
    key: str  # names the content: a commit id, or a directory taken to be immutable
    read: Callable[[str], str] = field(compare=False, hash=False, repr=False)


def workspace_tree(workspace: Workspace) -> BaseTree:
    """The workspace's base commit: what the agent started from."""
    base = workspace.base

    def read(rel: str) -> str:
        try:
            blob = workspace.git("cat-file", "blob", f"{base}:{rel}").stdout
        except WorkspaceError as exc:
            raise BaseTreeError(f"{rel} is not in the base commit {base[:12]}: {exc}") from None
        return _decode(blob, rel)

    return BaseTree(f"commit:{base}", read)


def directory_tree(root: Path) -> BaseTree:
    """A directory nothing changes while it is read."""
    root = Path(root).resolve()

    def read(rel: str) -> str:
        try:
            return _decode((root / rel).read_bytes(), rel)
        except OSError as exc:
            raise BaseTreeError(f"cannot read {rel} in {root}: {exc.strerror or exc}") from None

    return BaseTree(f"dir:{root}", read)


def _decode(data: bytes, rel: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise BaseTreeError(f"{rel} is not UTF-8 text") from None
