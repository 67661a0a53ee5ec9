"""An environment's venv: made by uv from a found interpreter, pinned across the build.

``uv venv --seed`` makes it in a fraction of a second, with the newest pip the interpreter can
run (Python 3.6's own venv ships pip 18.1, which ignores ``Requires-Python``; uv seeds 21.3.1).
It is a trusted step on the host (uv and the interpreter ``interpreters.py`` found, with the
scrubbed environment of ``pipsettings.py``); what runs the repository's code is
``builder.py``'s, in the sandbox.

The host never runs the venv's interpreter after the build (its site-packages may now hold
code that runs at start-up): the venv's ``pyvenv.cfg`` and interpreter links are pinned
(``pin_venv``) before the build and put back as they were (``restore_venv``) after it, and
the sandbox asks it for its prefixes with ``-S``.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from ..primitives import safefs
from .pipsettings import scrubbed_environ
from .spec import EnvironmentSetupError

# Bounds on what any resolution may pick for the tools the repository imports at run time
# (``builder``): setuptools 82 dropped pkg_resources (sphinx 4's registry imports it), and from
# 71 on it uses the environment's packaging, not its own, which a cut-off packaging breaks.
TOOL_BOUNDS = ("setuptools<71",)


def uv_binary() -> str:
    """The uv of this installation (the ``uv`` package's binary)."""
    from uv import find_uv_bin

    return str(find_uv_bin())


def create_venv(interpreter: str, venv: Path) -> None:
    """A venv with pip (and, before Python 3.12, setuptools and wheel), as ``uv venv --seed``
    makes it for ``interpreter``."""
    argv = [uv_binary(), "venv", "--quiet", "--seed", "--python", interpreter, str(venv)]
    host_step("create the venv", argv, 300)


def pin_venv(venv: Path) -> dict[str, tuple[str, str]]:
    """What makes the venv's interpreter start: pyvenv.cfg and the interpreter links, as the
    trusted venv module wrote them (restored after the build, whatever it did to them)."""
    pinned = {"pyvenv.cfg": ("file", (venv / "pyvenv.cfg").read_text(encoding="utf-8"))}
    for entry in sorted((venv / "bin").iterdir()):
        if entry.name.startswith("python") and entry.is_symlink():
            pinned[f"bin/{entry.name}"] = ("link", os.readlink(entry))
    return pinned


def restore_venv(venv: Path, pinned: Mapping[str, tuple[str, str]]) -> None:
    for rel in ("", "bin"):  # no link where the venv or its bin/ directory should be
        if (venv / rel).is_symlink() or not (venv / rel).is_dir():
            raise EnvironmentSetupError(f"the build replaced {venv / rel}: not a directory")
    for rel, (kind, value) in pinned.items():
        if kind == "file":
            safefs.write_text(venv, rel, value)
            continue
        tmp = venv / f"{rel}.toolpolicy-new"
        tmp.unlink(missing_ok=True)
        os.symlink(value, tmp)
        os.replace(tmp, venv / rel)


def host_step(what: str, argv: list[str], timeout: float) -> str:
    """A trusted step on the host (the venv module of a found interpreter)."""
    try:
        proc = subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout, check=False,
            env=scrubbed_environ(),
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        raise EnvironmentSetupError(f"{what}: timed out after {timeout:g}s") from None
    except OSError as exc:
        raise EnvironmentSetupError(f"{what} failed: {exc}") from None
    if proc.returncode:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-12:])
        raise EnvironmentSetupError(f"{what} failed (exit {proc.returncode}):\n{tail}")
    return proc.stdout
