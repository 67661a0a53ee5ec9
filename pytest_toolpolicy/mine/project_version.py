"""The version a project says it is at a commit, read from its own files without running them.

The nearest tag is a poor guide: seaborn tags its releases on branches, so an October 2022
commit of main whose own ``__version__`` reads ``0.12.1.dev0`` has ``v0.10`` as its nearest
reachable tag. What the project declares comes first: a literal ``version`` in
``pyproject.toml``'s ``[project]``, in ``setup.cfg``'s ``[metadata]``, in ``setup.py``'s
``setup()`` call, or a ``__version__`` (``version``) assigned a literal in the package's
``__init__.py``, ``_version.py``, ``version.py``, ``__about__.py`` or ``release.py`` (sympy's);
where a project computes
its version (setuptools_scm, versioneer), the caller falls back to the tag git describes, which
is what those tools derive it from. Pure functions over file texts.
"""

from __future__ import annotations

import ast
import configparser
import re
import sys
from collections.abc import Callable, Collection

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

Read = Callable[[str], "str | None"]
_MODULE = re.compile(
    r"^(?:src/)?([A-Za-z_][A-Za-z0-9_]*)/(__init__|_version|version|__about__|release)\.py$"
)
_NUMBERS = re.compile(r"(\d+)\.(\d+)")


def declared_version(files: Collection[str], read: Read, names: Collection[str] = ()) -> str | None:
    """The version the project at this commit declares (``files``: every path of its tree;
    ``read(path)``: a file's text), packages named like ``names`` (the project's) first; None
    where it declares none."""
    for found in (
        _pyproject(read("pyproject.toml") if "pyproject.toml" in files else None),
        _setup_cfg(read("setup.cfg") if "setup.cfg" in files else None),
        _setup_py(read("setup.py") if "setup.py" in files else None),
    ):
        if found:
            return found
    wanted = {n.replace("-", "_").lower() for n in names}
    modules = sorted(
        (m[1].lower() not in wanted, m[1], path)
        for path in files
        if (m := _MODULE.match(path)) and m[1] not in ("tests", "test", "docs", "doc")
    )
    for _, _, path in modules:
        found = _assigned(read(path))
        if found:
            return found
    return None


def major_minor(text: str) -> str | None:
    """``v7.2.1`` → ``7.2``, ``sympy-1.5`` → ``1.5``; None without two numbers."""
    found = _NUMBERS.search(text.strip())
    return f"{int(found[1])}.{int(found[2])}" if found else None


def _pyproject(text: str | None) -> str | None:
    if not text:
        return None
    try:
        project = tomllib.loads(text).get("project")
    except (tomllib.TOMLDecodeError, RecursionError):
        return None
    value = project.get("version") if isinstance(project, dict) else None
    return value if isinstance(value, str) else None


def _setup_cfg(text: str | None) -> str | None:
    if not text:
        return None
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    value = parser.get("metadata", "version", fallback="").strip()
    return value if value and ":" not in value else None  # not ``attr:`` or ``file:``


def _setup_py(text: str | None) -> str | None:
    tree = _parse(text)
    for node in ast.walk(tree) if tree else ():
        called = getattr(node, "func", None)
        name = getattr(called, "id", getattr(called, "attr", ""))
        if isinstance(node, ast.Call) and name == "setup":
            for keyword in node.keywords:
                if keyword.arg == "version":
                    return _literal(keyword.value)
    return None


def _assigned(text: str | None) -> str | None:
    tree = _parse(text)
    for node in tree.body if tree else ():
        if not isinstance(node, ast.Assign):
            continue
        names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        if {"__version__", "version"} & set(names) and (found := _literal(node.value)):
            return found
    return None


def _literal(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _parse(text: str | None) -> ast.Module | None:
    if not text:
        return None
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
