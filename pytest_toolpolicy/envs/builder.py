"""One environment's build, step by step (``Builder``), each failure an ``EnvironmentSetupError``.

The steps: the checkout (a local clone at the commit), the venv (the spec's interpreter,
``interpreters.find_python``; ``venvs.py``), pip install of the requirement files then of the
pinned packages, ``pre_install`` in the checkout, ``install``. Everything after the venv runs
the repository's code (setup.py, build backends), so it runs in the Sandbox with the network
shared and only the env directory writable (its ``.git`` read-only); the degraded sandbox runs
it on the host with the sandbox's scrubbed environment. pip's settings reach it as
``pipsettings.py`` says. After the install the venv's start-up files are put back
(``venvs.restore_venv``), and the venv is asked, in the sandbox, which ``sys.path`` entries
and editable-finder mappings point into the checkout (``.`` or ``src``): the environment's
import paths (``environment.py``), with the files the install generated.

SWE-bench installs the repository at each instance's base commit into the setup commit's
environment. Where the two commits differ, what the base commit's install requires and the
environment lacks (pytest 5.4's early commits still need ``wcwidth``) is found by pip's dry
run at the base commit, in the sandbox (``Builder.top_up``), and installed with
``--no-deps --target`` into the venv's ``toolpolicy-base/<commit>/site``, which goes on that
instance's ``PYTHONPATH`` after the repo's paths (``Environment.extra_paths``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import stat
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..primitives import hostgit, safefs
from ..primitives.bwrap import SandboxLimits
from ..primitives.safefs import remove_tree
from ..primitives.sandbox import Sandbox
from ..primitives.workspace import Workspace, WorkspaceError
from .environment import generated_files
from .interpreters import interpreter_version
from .layout import LAYERS, TMP, VENV, layer_site
from .output import PROBE, checked_output, missing_packages, repo_paths
from .pipsettings import build_environ, pip_paths
from .spec import EnvironmentSetupError, EnvSpec
from .venvs import create_venv, pin_venv, restore_venv

# A build may take minutes and compile things: more room than a test run gets.
BUILD_LIMITS = SandboxLimits(
    memory_bytes=4 << 30, pids=1024, address_space_bytes=32 << 30, file_size_bytes=2 << 30,
    open_files=4096, tmpfs_bytes=512 << 20,
)  # fmt: skip


def build_sandbox(sandbox: Sandbox | None) -> Sandbox:
    """The caller's kind of sandbox (else the configured one), with a build's limits."""
    sandbox = sandbox or Sandbox.from_env()
    reason = sandbox.notes[0].removeprefix("degraded sandbox: ") if sandbox.notes else None
    return Sandbox(sandbox.mode, bwrap=sandbox.bwrap, limits=BUILD_LIMITS, reason=reason)


class Builder:
    """One environment's build, step by step; each failure an ``EnvironmentSetupError``."""

    def __init__(
        self, home: Path, spec: EnvSpec, interpreter: str, sandbox: Sandbox, timeout: float
    ) -> None:
        self.home, self.spec, self.interpreter = home, spec, interpreter
        self.sandbox, self.timeout = sandbox, timeout
        self.venv = home / VENV
        self.python = str(self.venv / "bin" / "python")

    def build(self, checkout: Path, commit: str) -> dict[str, Any]:
        remove_tree(self.home, within=self.home.parent)  # a build that died half-way
        self.home.parent.mkdir(parents=True, exist_ok=True)
        workspace = self._clone(checkout, commit)
        spec = self.spec.resolved(lambda rel: _is_file(self.home, rel))
        create_venv(self.interpreter, self.venv, self.home.parent / ".templates")
        pinned = pin_venv(self.venv)
        (self.home / TMP).mkdir()
        pip = [self.python, "-m", "pip", "install"]
        if spec.requirements:
            reqs = [arg for rel in spec.requirements for arg in ("-r", rel)]
            self._step(f"pip install {' '.join(reqs)}", [*pip, *reqs])
        if spec.pip_packages:
            self._step("pip install of the pinned packages", [*pip, *spec.pip_packages])
        for command in spec.pre_install:
            self._step(f"pre_install `{command}`", ["/bin/bash", "-c", command])
        if spec.install:
            self._step(f"install `{spec.install}`", ["/bin/bash", "-c", spec.install])
        restore_venv(self.venv, pinned)
        probe = self._step("read sys.path", [self.python, "-I", "-c", PROBE])
        remove_tree(self.home / TMP, within=self.home)
        return {
            "repo": spec.repo,
            "version": spec.version,
            "commit": commit,
            "spec_key": self.spec.key(),
            "spec": dataclasses.asdict(spec),
            "interpreter": self.interpreter,
            "python_version": interpreter_version(os.path.realpath(self.interpreter)),
            "repo_paths": repo_paths(probe, self.home),
            "generated": generated_files(workspace, self.home),
            "built_at": time.strftime("%Y-%m-%d %H:%M:%S"),
        }

    def _clone(self, checkout: Path, commit: str) -> Workspace:
        # A local clone hard-links the cached objects; the sandbox keeps this .git read-only.
        clone = ["clone", "-q", "--no-checkout", str(checkout), str(self.home)]
        hostgit.run(clone, cwd=self.home.parent, error=_checkout_error)
        hostgit.neutralize_attributes(self.home / ".git")
        hostgit.run(["checkout", "-q", "--detach", commit], cwd=self.home, error=_checkout_error)
        info = self.home / ".git" / "info"
        info.mkdir(exist_ok=True)
        with open(info / "exclude", "a", encoding="utf-8") as handle:
            handle.write(f"/{VENV}/\n/{TMP}/\n")
        try:
            return Workspace(self.home)
        except WorkspaceError as exc:
            raise EnvironmentSetupError(f"the environment's checkout: {exc}") from None

    def top_up(self, checkout: Path, base: str) -> dict[str, Any]:
        """Install what the base commit's own install requires and the environment lacks
        (pip's dry run at the base commit says what) into the venv's ``toolpolicy-base/<base>``
        (the venv is visible to every sandboxed run), with ``--no-deps --target``.

        The venv is the build's: whatever ran there may have left a link on the layer's path,
        so every step's path is checked below the environment's directory, never followed."""
        rel = f"{VENV}/{LAYERS}/{base}"
        wanted: list[str] = []
        try:
            layer = safefs.inside(self.home, rel)
            remove_tree(layer, within=self.home)
            safefs.make_dirs(self.home, rel)
        except (OSError, safefs.UnsafePath) as exc:
            raise EnvironmentSetupError(f"the base commit's layer: {exc}") from None
        src = layer / "src"
        try:
            clone = ["clone", "-q", "--no-checkout", str(checkout), str(src)]
            hostgit.run(clone, cwd=layer, error=_checkout_error)
            hostgit.neutralize_attributes(src / ".git")
            hostgit.run(["checkout", "-q", "--detach", base], cwd=src, error=_checkout_error)
            (layer / TMP).mkdir()
            ro = (str(src / ".git"),)
            for command in self.spec.pre_install:
                argv = ["/bin/bash", "-c", command]
                self._step(f"pre_install `{command}`", argv, cwd=src, writable=layer, ro=ro)
            report = layer / "report.json"
            dry = [self.python, "-m", "pip", "install", "--dry-run", "--report", str(report), "."]
            what = f"pip's dry run at the base commit {base[:12]}"
            self._step(what, dry, cwd=src, writable=layer, ro=ro)
            wanted = missing_packages(safefs.read_bytes(layer, "report.json", 16 << 20), src)
            if wanted:
                pip = [self.python, "-m", "pip", "install", "--no-deps", "--target", "site"]
                self._step(f"pip install of {' '.join(wanted)}", [*pip, *wanted], writable=layer)
        except (OSError, safefs.UnsafePath) as exc:
            raise EnvironmentSetupError(f"the base commit's layer: {exc}") from None
        finally:
            for leftover in (src, layer / TMP, layer / "report.json"):
                with contextlib.suppress(OSError, safefs.UnsafePath):
                    remove_tree(leftover, within=layer)
        return {"commit": base, "packages": wanted, "site": layer_site(base) if wanted else ""}

    def _step(
        self,
        what: str,
        argv: list[str],
        cwd: Path | None = None,
        writable: Path | None = None,
        ro: Sequence[str] = (),
    ) -> str:
        writable = writable or self.home
        tmp = str(writable / TMP)
        env = {**build_environ(), "TMPDIR": tmp, "PIP_CACHE_DIR": f"{tmp}/pip-cache"}
        result = self.sandbox.run(
            argv,
            cwd=cwd or writable,
            writable=writable,
            stdin=None,
            timeout=self.timeout,
            merge_stderr=True,
            python=self.python,
            env=env,
            network=True,
            ro_binds=(*pip_paths(), *ro),
        )
        return checked_output(what, result, self.timeout)


def _checkout_error(message: str) -> EnvironmentSetupError:
    return EnvironmentSetupError(f"the environment's checkout: {message}")


def _is_file(root: Path, rel: str) -> bool:
    try:
        return stat.S_ISREG(safefs.lstat(root, rel).st_mode)
    except (safefs.UnsafePath, OSError):
        return False
