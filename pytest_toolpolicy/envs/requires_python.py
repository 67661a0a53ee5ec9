"""The Python a checkout declares it needs, for a version the specs do not list.

SWE-bench's specs name an interpreter per listed version. An instance of another version (mined
from a repository's newer history: pytest 9 needs Python 3.10, its table's default is 3.9) gets
the repository's table, whose interpreter may be one the checkout refuses. Its declaration is
read as data, never run: ``[project] requires-python`` of ``pyproject.toml``, else
``python_requires`` of ``setup.cfg``'s ``[options]``, else a literal ``python_requires="…"`` in
``setup.py``. ``choose`` keeps the spec's interpreter where it satisfies that, else takes the
lowest installed ``X.Y`` that does.

Pure functions, but ``installed_versions`` (which ``X.Y`` pyenv has).
"""

from __future__ import annotations

import configparser
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

import tomllib
from packaging.specifiers import InvalidSpecifier, SpecifierSet

from .interpreters import pyenv_root

_RELEASE = re.compile(r"(\d+)\.(\d+)\.(\d+)")  # a pyenv release directory, not 3.13.0t
_SETUP_PY = re.compile(r"""python_requires\s*=\s*(['"])([^'"]{1,100})\1""")
_MAX = 1 << 20  # bytes of a packaging file read


def declared(read: Callable[[str], str | None]) -> SpecifierSet | None:
    """The checkout's declared Python (``read(rel)``: a file's text, or None), or None."""
    text = read("pyproject.toml")
    if text:
        try:
            found = tomllib.loads(text).get("project", {}).get("requires-python")
        except (tomllib.TOMLDecodeError, AttributeError):
            found = None
        if isinstance(found, str):
            return _specifier(found)
    text = read("setup.cfg")
    if text:
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(text)
            found = parser.get("options", "python_requires", fallback=None)
        except configparser.Error:
            found = None
        if found:
            return _specifier(found)
    text = read("setup.py")
    if text and (match := _SETUP_PY.search(text)):
        return _specifier(match[2])
    return None


def _specifier(text: str) -> SpecifierSet | None:
    try:
        return SpecifierSet(text.strip())
    except InvalidSpecifier:
        return None


def choose(current: str, needs: SpecifierSet, available: Iterable[str]) -> str | None:
    """``current`` ("X.Y"; "" for the harness's own) where ``needs`` admits it, else the lowest
    of ``available`` that it admits ("X.Y"), else None (nothing here satisfies it)."""
    mine = current or f"{sys.version_info[0]}.{sys.version_info[1]}"
    if needs.contains(f"{mine}.0", prereleases=True) or needs.contains(mine, prereleases=True):
        return current
    fits = [v for v in available if needs.contains(f"{v}.0", prereleases=True)]
    return min(fits, key=lambda v: tuple(int(p) for p in v.split("."))) if fits else None


def installed_versions() -> list[str]:
    """The ``X.Y`` of the releases pyenv has installed (none without pyenv)."""
    root = pyenv_root()
    if root is None:
        return []
    found = {
        f"{m[1]}.{m[2]}"
        for entry in (root / "versions").glob("*")
        if (m := _RELEASE.fullmatch(entry.name)) and (entry / "bin").is_dir()
    }
    return sorted(found, key=lambda v: tuple(int(p) for p in v.split(".")))


def reader(root: Path) -> Callable[[str], str | None]:
    """``read(rel)`` of a checkout's top-level file, through ``safefs``: no link followed, a
    bounded read."""
    from ..primitives import safefs

    def read(rel: str) -> str | None:
        try:
            return safefs.read_text(root, rel, _MAX)
        except (OSError, safefs.UnsafePath, UnicodeDecodeError, ValueError):
            return None

    return read
