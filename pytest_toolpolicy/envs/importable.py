"""The top-level module names an interpreter's environment provides (its standard library and
site-packages), read from directory listings on the host: nothing of the environment runs.

A module the model adds under one of these names, where the test run imports from, would be
imported instead of the real one (``guard.py``). Names only: a listing never follows a link.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

from ..primitives.bwrap import python_prefixes

_SKIP = ("__pycache__", "site-packages", "dist-packages", "lib-dynload")
_SUFFIXES = (".py", ".pyc", ".so", ".pyd")


@functools.lru_cache(maxsize=32)
def installed_modules(python: str) -> frozenset[str]:
    """Module names importable in ``python``'s environment without the workspace: the
    interpreter's built-in modules (the host's list stands in for them: a built-in module
    cannot be shadowed anyway), its standard library and its site-packages."""
    names = set(sys.builtin_module_names)
    for prefix in python_prefixes(python):
        for lib in sorted(Path(prefix).glob("lib/python*")):
            for directory in (lib, lib / "lib-dynload", lib / "site-packages"):
                names |= _listed(directory)
    return frozenset(names)


def _listed(directory: Path) -> set[str]:
    found: set[str] = set()
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return found
    for entry in entries:
        name = entry.name
        if name in _SKIP or name.endswith((".dist-info", ".egg-info", ".pth")):
            continue
        stem = name.split(".", 1)[0]
        if not stem.isidentifier():
            continue
        if entry.is_dir(follow_symlinks=False) or name.endswith(_SUFFIXES):
            found.add(stem)
    return found
