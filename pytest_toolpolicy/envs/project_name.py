"""The name a checkout installs itself under, read from its files without running anything.

The install's constraints must never name the project: it is being installed from the
checkout, and a constraint on it — however it arrived: as a dependency of its own plugins
(sphinx 7.2's ``sphinxcontrib-*`` need ``sphinx>=5``) or of the test tooling it is part of
(pluggy's ``testing`` extra needs pytest, which needs pluggy: the day's ``pluggy==1.7.0``
against the checkout's 1.6.0) — is the release of the cutoff day, which the checkout is not.
So the name is read from the checkout: ``[project] name`` in ``pyproject.toml``, ``[metadata]
name`` in ``setup.cfg``, a literal ``name=`` in ``setup.py``'s ``setup()`` call (read with
``ast``, never run), and the repository's own name as the last resort. Pure functions.
"""

from __future__ import annotations

import ast
import configparser
import sys
from collections.abc import Callable

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

Read = Callable[[str], "str | None"]


def project_names(read: Read, repo: str) -> set[str]:
    """Every name the checkout (``read(rel)``: its file's text, None without one) declares for
    itself, and the repository's (``owner/name``) own name."""
    found = {repo.rpartition("/")[2]} if repo else set()
    found |= _from_pyproject(read("pyproject.toml"))
    found |= _from_setup_cfg(read("setup.cfg"))
    found |= _from_setup_py(read("setup.py"))
    return {name for name in found if name}


def _from_pyproject(text: str | None) -> set[str]:
    if not text:
        return set()
    try:
        table = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        return set()
    project = table.get("project")
    name = project.get("name") if isinstance(project, dict) else None
    return {name} if isinstance(name, str) else set()


def _from_setup_cfg(text: str | None) -> set[str]:
    if not text:
        return set()
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return set()
    name = parser.get("metadata", "name", fallback="").strip()
    return {name} if name and "%" not in name and "{" not in name else set()


def _from_setup_py(text: str | None) -> set[str]:
    if not text:
        return set()
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    found = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and getattr(node.func, "id", getattr(node.func, "attr", "")) == "setup"
        ):
            for keyword in node.keywords:
                value = keyword.value
                literal = isinstance(value, ast.Constant) and isinstance(value.value, str)
                if keyword.arg == "name" and literal:
                    found.add(value.value)  # type: ignore[attr-defined]
    return found
