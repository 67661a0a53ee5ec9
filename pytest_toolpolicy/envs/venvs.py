"""An environment's venv: made from a per-interpreter template, pinned across the build.

The venv copies the site-packages (pip, setuptools) of a template made once per interpreter
by ``python -m venv`` (ensurepip takes seconds each time). Both are made on the host, by
trusted code only (``host_step``: the venv module of a found interpreter, with the scrubbed
environment of ``pipsettings.py``); what runs the repository's code is ``builder.py``'s.

The host never runs the venv's interpreter after the build (its site-packages may now hold
code that runs at start-up): the venv's ``pyvenv.cfg`` and interpreter links are pinned
(``pin_venv``) before the build and put back as they were (``restore_venv``) after it, and
the sandbox asks it for its prefixes with ``-S``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

from ..primitives import safefs
from ..primitives.safefs import remove_tree
from .interpreters import interpreter_version
from .pipsettings import scrubbed_environ
from .spec import EnvironmentSetupError


def create_venv(interpreter: str, venv: Path, templates: Path) -> None:
    """A venv with pip and setuptools, as ``python -m venv`` makes it, in a fraction of the
    time: ensurepip's install (seconds of unpacking and compiling) is done once per interpreter
    in a template, trusted steps only, whose site-packages each new venv copies."""
    real = os.path.realpath(interpreter)
    template = templates / hashlib.sha256(real.encode()).hexdigest()[:12]
    if not (template / "pyvenv.cfg").is_file():
        templates.mkdir(parents=True, exist_ok=True)
        tmp = templates / f".tmp-{os.getpid()}-{time.monotonic_ns()}"
        try:
            host_step("create the venv", [interpreter, "-m", "venv", str(tmp)], 300)
            with contextlib.suppress(OSError):  # lost a race: the other one is as good
                tmp.rename(template)
        finally:
            with contextlib.suppress(OSError):
                remove_tree(tmp, within=templates)
    host_step("create the venv", [interpreter, "-m", "venv", "--without-pip", str(venv)], 300)
    for site in template.glob("lib/python*/site-packages"):
        shutil.copytree(site, venv / site.relative_to(template), symlinks=True, dirs_exist_ok=True)
    version = interpreter_version(real) or ""
    for name in ("pip", "pip3", f"pip{version}"):  # the template's scripts name its own path
        script = venv / "bin" / name
        script.write_text('#!/bin/sh\nexec "$(dirname "$0")/python" -m pip "$@"\n')
        script.chmod(0o755)


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
