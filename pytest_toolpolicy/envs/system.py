"""What an environment needs of this machine beyond Python packages, checked before its build:
Debian packages (a compiler's headers, graphviz, a spell-checker's library, locales) and git
submodules the checkout must carry. A missing one fails the build at once, as an
infrastructure error naming what is missing and how to get it, instead of minutes into a build
that cannot succeed."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

from .spec import EnvironmentSetupError, EnvSpec


class SystemMissing(EnvironmentSetupError):
    """What the spec needs of the machine is not there; the message says how to get it."""


@functools.lru_cache(maxsize=256)
def installed(package: str) -> bool:
    """Whether the Debian package is installed (dpkg's own record)."""
    dpkg = shutil.which("dpkg-query")
    if dpkg is None:
        return False
    proc = subprocess.run(
        [dpkg, "-W", "-f=${Status}", package],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"},
    )
    return proc.returncode == 0 and proc.stdout.strip().endswith("installed")


def check_system(spec: EnvSpec) -> None:
    missing = [p for p in spec.apt if not installed(p)]
    if missing:
        how = (
            "install them: apt-get install " + " ".join(missing)
            if shutil.which("dpkg-query")
            else "this machine has no dpkg: install their equivalents"
        )
        raise SystemMissing(
            f"{spec.describe()} needs the Debian package(s) {', '.join(missing)}, "
            f"not installed here; {how} (as root), then build again with --rebuild"
        )


def check_submodules(spec: EnvSpec, checkout: Path) -> None:
    """Each submodule path the spec names must hold files in the checkout: a mirror made by
    ``git clone --mirror`` carries none of them."""
    empty = []
    for rel in spec.submodules:
        path = checkout / rel
        try:
            has_files = path.is_dir() and not path.is_symlink() and any(os.scandir(path))
        except OSError:
            has_files = False
        if not has_files:
            empty.append(rel)
    if empty:
        raise SystemMissing(
            f"{spec.describe()} needs the git submodule(s) {', '.join(empty)} in its "
            "checkout, and the repository's mirror has none: give a spec that builds "
            "without them (a PyPI package in their place), or a mirror whose history "
            "carries them"
        )
