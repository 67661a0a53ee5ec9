"""``Environment``: what an instance's test run needs of the Python environment it runs in.

Import paths: at build time the venv is asked (in the sandbox, ``builder.py``) which
``sys.path`` entries, and which editable-finder mappings, point into the checkout (``.`` or
``src``); at test time those are taken inside the item's own workspace and put first on
``PYTHONPATH``, then ``extra_paths`` (what the instance's base commit needs beyond the
environment's commit). Files the install generated (setuptools_scm's ``_version.py``:
untracked, small, text) are recorded at build time (``generated_files``) and copied into each
workspace that lacks them by ``Environment.seed``, and marked ignored there, so they are never
part of a patch.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..primitives import safefs
from ..primitives.workspace import Workspace, WorkspaceError
from .layout import TMP, VENV
from .spec import EnvironmentSetupError, EnvSpec

# Generated files worth copying into an item: small text outside build output and caches.
_SKIP_PARTS = frozenset({"build", "dist", "__pycache__", ".eggs", ".tox", ".git", VENV, TMP})
_SKIP_PARTS |= {".pytest_cache", ".mypy_cache", ".nox", "node_modules"}
_GENERATED_MAX_BYTES = 64 << 10
_GENERATED_MAX_FILES = 200


@dataclass(frozen=True)
class Environment:
    python: str
    # sys.path entries of the installed repo, relative to its checkout ("." or "src").
    repo_paths: tuple[str, ...] = ()
    plugin_autoload: bool = True
    spec: EnvSpec | None = None
    # (path, text) of each file the install generated in the checkout, for ``seed``.
    generated: tuple[tuple[str, str], ...] = ()
    home: str = ""  # the environment's directory; "" for the harness's own interpreter
    # After the repo's: what the instance's base commit needs beyond the environment's commit.
    extra_paths: tuple[str, ...] = ()

    def pythonpath(self, root: Path) -> tuple[str, ...]:
        """The repo's import paths inside the workspace ``root``, then the extra paths."""
        return (*(str((root / rel).resolve()) for rel in self.repo_paths), *self.extra_paths)

    def sandbox_env(self, root: Path) -> dict[str, str]:
        """What a sandboxed run in the workspace ``root`` adds to its environment to import the
        workspace's package as grading does (and no plugins where grading loads none)."""
        paths = self.pythonpath(root)
        env = {"PYTHONPATH": ":".join(paths)} if paths else {}
        if not self.plugin_autoload:
            env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        return env

    def seed(self, root: Path) -> tuple[str, ...]:
        """Copy the generated files into the workspace ``root`` where it lacks them (through
        ``safefs``: nothing is written through a link) and list them in its
        ``.git/info/exclude``, so no snapshot or patch holds them. Returns the paths copied."""
        copied = []
        for rel, text in self.generated:
            try:
                safefs.lstat(root, rel)
                continue
            except FileNotFoundError:
                pass
            except (safefs.UnsafePath, OSError):
                continue  # a link or a file where a directory of the path should be
            with contextlib.suppress(safefs.UnsafePath, OSError):
                safefs.write_text(root, rel, text)
                copied.append(rel)
        if copied and (root / ".git").is_dir() and not (root / ".git").is_symlink():
            _exclude(root, copied)
        return tuple(copied)


def generated_files(workspace: Workspace, home: Path) -> dict[str, str]:
    """Untracked files (ignored ones too) the build left in the checkout that an import may
    need: small UTF-8 text, outside build output, metadata and caches."""
    try:
        listing = workspace.git("ls-files", "-z", "--others", "--", ".").text
    except WorkspaceError as exc:
        raise EnvironmentSetupError(f"list the generated files: {exc}") from None
    found: dict[str, str] = {}
    total = 0
    for rel in sorted(filter(None, listing.split("\0"))):
        parts = PurePosixPath(rel).parts
        if any(p in _SKIP_PARTS or p.endswith(".egg-info") for p in parts):
            continue
        if rel.endswith((".pyc", ".pyo", ".so", ".pyd")) or len(found) >= _GENERATED_MAX_FILES:
            continue
        try:
            data = safefs.read_bytes(home, rel, _GENERATED_MAX_BYTES)
            text = data.decode("utf-8")
        except (safefs.UnsafePath, OSError, UnicodeDecodeError):
            continue
        if "\0" not in text and total + len(data) <= 16 * _GENERATED_MAX_BYTES:
            found[rel] = text
            total += len(data)
    return found


def _exclude(root: Path, paths: Sequence[str]) -> None:
    rel = ".git/info/exclude"
    try:
        current = safefs.read_text(root, rel, 1 << 20)
    except FileNotFoundError:
        current = ""
    lines = [f"/{p}" for p in paths if f"/{p}" not in current.splitlines()]
    if lines:
        text = current + ("" if not current or current.endswith("\n") else "\n")
        safefs.write_text(root, rel, text + "\n".join(lines) + "\n")
