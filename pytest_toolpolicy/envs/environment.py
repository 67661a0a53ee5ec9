"""``Environment``: what an instance's test run needs of the Python environment it runs in.

The workspace is the installed package. An environment built in bwrap mode (``testbed``) saw
its checkout at ``/testbed`` while the repository installed itself (editable, as SWE-bench's
images have it), so its ``.pth`` files and editable finders point there; every sandboxed run of
an item sees the item's workspace at ``/testbed`` (``Environment.sandbox``), and the tests
import the workspace's code and nothing else: no second tree on any path. Without bubblewrap
(the degraded sandbox has no mount namespace) the workspace's import paths, as the build's
probe found them (``.`` or ``src``), go first on ``PYTHONPATH`` instead.

``extra_paths`` (what the instance's base commit needs beyond the environment's commit) come
after. Files the install generated (setuptools_scm's ``_version.py``, compiled extension
modules) are recorded at build time (``generated_files``) and copied from the environment's
checkout into each workspace that lacks them by ``Environment.seed``, and marked ignored
there, so they are never part of a patch; compiled modules come from the base commit's own
build instead where its C sources differ from the setup commit's (``overlay``).
"""

from __future__ import annotations

import contextlib
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..primitives import safefs
from ..primitives.sandbox import Sandbox
from ..primitives.workspace import Workspace, WorkspaceError
from .clock import clock_env
from .layout import REPO, TESTBED
from .spec import EnvironmentSetupError, EnvSpec

# Generated files worth copying into an item: outside build output and caches, small text or
# a compiled extension module.
_SKIP_PARTS = frozenset({"build", "dist", "__pycache__", ".eggs", ".tox", ".git"})
_SKIP_PARTS |= {".pytest_cache", ".mypy_cache", ".nox", "node_modules"}
_EXTENSIONS = (".so", ".pyd")
_TEXT_MAX_BYTES = 64 << 10
_EXTENSION_MAX_BYTES = 256 << 20
_GENERATED_MAX_FILES = 2000


@dataclass(frozen=True)
class Environment:
    python: str
    # sys.path entries of the installed repo, relative to its checkout ("." or "src").
    repo_paths: tuple[str, ...] = ()
    plugin_autoload: bool = True
    # The modules of the pytest plugins the environment installed (``output.plugin_modules``):
    # what grading loads, by name, with autoloading off.
    plugins: tuple[str, ...] = ()
    spec: EnvSpec | None = None
    # Paths, relative to the checkout, of the files the install generated, for ``seed``.
    generated: tuple[str, ...] = ()
    home: str = ""  # the environment's directory; "" for the harness's own interpreter
    # After the repo's: what the instance's base commit needs beyond the environment's commit.
    extra_paths: tuple[str, ...] = ()
    testbed: bool = False  # built with its checkout at /testbed (see the module docstring)
    # The base commit's compiled modules, built where its C sources differ from the setup
    # commit's (``extensions.py``): the directory, and their paths in the checkout. They
    # replace every compiled module of ``generated``.
    overlay: str = ""
    overlay_files: tuple[str, ...] = ()
    # The date the tests' clock reads (the spec's ``clock`` for this instance); "" = real.
    clock: str = ""

    def pythonpath(self, root: Path, mounted: bool = False) -> tuple[str, ...]:
        """``PYTHONPATH`` of a run in the workspace ``root``: the workspace's import paths
        unless it is seen at /testbed (``mounted``), then the extra paths."""
        own = () if mounted else tuple(str((root / rel).resolve()) for rel in self.repo_paths)
        return (*own, *self.extra_paths)

    def sandbox_env(self, root: Path, mounted: bool = False) -> dict[str, str]:
        """What a sandboxed run in the workspace ``root`` adds to its environment to import the
        workspace's package as grading does (and no plugins where grading loads none)."""
        paths = self.pythonpath(root, mounted)
        env = {"PYTHONPATH": ":".join(paths)} if paths else {}
        if not self.plugin_autoload:
            env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        if self.spec is not None:
            env.update(dict(self.spec.test_env))
        if self.clock:
            env.update(clock_env(self.clock))
        return env

    def sandbox(self, base: Sandbox, root: Path) -> Sandbox:
        """``base`` made to run this environment's tests in the workspace ``root``: the
        workspace seen at /testbed where the environment was built so (bwrap mode), the
        variables above, and the base commit's layer readable."""
        mounted = self.testbed and base.mode == "bwrap"
        return base.bound(
            mount=TESTBED if mounted else None,
            env=self.sandbox_env(root, mounted),
            ro_binds=tuple(self.extra_paths),
        )

    def seed(self, root: Path) -> tuple[str, ...]:
        """Copy the generated files from the environment's checkout into the workspace
        ``root`` where it lacks them (read and written through ``safefs``: no link is
        followed on either side, and a read is bounded) and list them in its
        ``.git/info/exclude``, so no snapshot or patch holds them. Returns the paths copied."""
        copied = []
        checkout, overlay = Path(self.home) / REPO, Path(self.overlay)
        sources = [
            (rel, checkout)
            for rel in self.generated
            if not (self.overlay_files and rel.endswith(_EXTENSIONS))
        ]
        sources += [(rel, overlay) for rel in self.overlay_files if self.overlay]
        for rel, source in sources:
            try:
                safefs.lstat(root, rel)
                continue
            except FileNotFoundError:
                pass
            except (safefs.UnsafePath, OSError):
                continue  # a link or a file where a directory of the path should be
            with contextlib.suppress(safefs.UnsafePath, OSError):
                info = safefs.lstat(source, rel)
                data = safefs.read_bytes(source, rel, _EXTENSION_MAX_BYTES)
                safefs.write_bytes(root, rel, data, mode=stat.S_IMODE(info.st_mode))
                copied.append(rel)
        if copied and (root / ".git").is_dir() and not (root / ".git").is_symlink():
            _exclude(root, copied)
        return tuple(copied)


def generated_files(workspace: Workspace, checkout: Path) -> list[str]:
    """Untracked files (ignored ones too) the build left in the checkout that an import may
    need: small UTF-8 text, or a compiled extension module, outside build output, metadata and
    caches."""
    try:
        listing = workspace.git("ls-files", "-z", "--others", "--", ".").text
    except WorkspaceError as exc:
        raise EnvironmentSetupError(f"list the generated files: {exc}") from None
    found: list[str] = []
    for rel in sorted(filter(None, listing.split("\0"))):
        parts = PurePosixPath(rel).parts
        if any(p in _SKIP_PARTS or p.endswith(".egg-info") for p in parts):
            continue
        if rel.endswith((".pyc", ".pyo")) or len(found) >= _GENERATED_MAX_FILES:
            continue
        try:
            info = safefs.lstat(checkout, rel)
        except (safefs.UnsafePath, OSError):
            continue
        if not stat.S_ISREG(info.st_mode):
            continue
        if rel.endswith(_EXTENSIONS):
            if info.st_size <= _EXTENSION_MAX_BYTES:
                found.append(rel)
            continue
        try:
            data = safefs.read_bytes(checkout, rel, _TEXT_MAX_BYTES)
            data.decode("utf-8")
        except (safefs.UnsafePath, OSError, UnicodeDecodeError):
            continue
        if b"\0" not in data:
            found.append(rel)
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
