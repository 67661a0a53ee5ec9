"""How a repository configures its test run, read from text without running anything: the
pytest section of an ini, cfg or toml file, and the plugins a configuration or a conftest names.

Pure functions over bytes (``guard.py`` asks them of the base commit's files and of the
model's). A file that does not parse has a section of its own kind, "unreadable", so that a
model who breaks one is seen to have changed it.
"""

from __future__ import annotations

import ast
import configparser
import re
import shlex
import sys
from collections.abc import Iterable

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

# The files pytest reads its configuration from, and the section each holds it in.
INI_SECTIONS: dict[str, tuple[str, ...]] = {
    "pytest.ini": ("pytest",),
    ".pytest.ini": ("pytest",),
    "tox.ini": ("pytest",),
}
INI_SECTIONS["setup.cfg"] = ("tool:pytest", "pytest")
TOML_FILES = frozenset({"pyproject.toml", "pytest.toml", ".pytest.toml"})
CONFIG_FILES = frozenset(INI_SECTIONS) | TOML_FILES
_UNREADABLE = "unreadable"


def test_section(name: str, data: bytes | None) -> object:
    """The part of the config file ``name`` (a base name) that configures pytest, as a value
    that compares equal exactly when pytest would read the same settings; None without one."""
    if data is None:
        return None
    if name in TOML_FILES:
        try:
            table = tomllib.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
            return _UNREADABLE
        tool = table.get("tool") if isinstance(table, dict) else None
        found = tool.get("pytest") if isinstance(tool, dict) else None
        return found if name == "pyproject.toml" else table
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    try:
        parser.read_string(data.decode("utf-8", errors="replace"))
    except configparser.Error:
        return _UNREADABLE
    wanted = INI_SECTIONS.get(name, ())
    sections = {s: dict(parser.items(s)) for s in wanted if parser.has_section(s)}
    return sections or None


def quiet(name: str, data: bytes | None) -> bool:
    """Whether the config file's ``addopts`` quiets pytest further (``-q``, ``--quiet``) or
    takes its terminal reporter away (``-p no:terminal``): grading adds ``-q`` of its own, and
    at ``-qq`` pytest prints no summary line."""
    words = _addopts_words(name, data)
    if any(w in ("-q", "--quiet") or re.fullmatch(r"-q+", w) for w in words):
        return True
    return any(w in ("no:terminal", "-pno:terminal") for w in words)


def addopts_plugins(name: str, data: bytes | None) -> set[str]:
    """The modules ``-p NAME`` in the config file's ``addopts`` loads (not ``-p no:NAME``)."""
    return _p_options(_addopts_words(name, data))


def _addopts_words(name: str, data: bytes | None) -> list[str]:
    words: list[str] = []
    for value in _addopts(test_section(name, data)):
        if isinstance(value, str):
            try:
                words += shlex.split(value)
            except ValueError:
                words += value.split()
        elif isinstance(value, list):
            words += [str(v) for v in value]
    return words


def _addopts(section: object, depth: int = 0) -> Iterable[object]:
    """Every ``addopts`` value in a section: an ini section's, ``ini_options``' or pytest 9's."""
    if not isinstance(section, dict) or depth > 2:
        return
    for key, value in section.items():
        if key == "addopts":
            yield value
        elif isinstance(value, dict):
            yield from _addopts(value, depth + 1)


def conftest_plugins(data: bytes | None) -> set[str]:
    """The modules a conftest's (or test module's) ``pytest_plugins`` names: a string, or a
    list or tuple of strings, assigned at module level; found with ``ast``, never run."""
    if data is None:
        return set()
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    found: set[str] = set()
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if any(isinstance(t, ast.Name) and t.id == "pytest_plugins" for t in targets):
            found |= set(_strings(node.value))  # type: ignore[attr-defined]
    return found


def _strings(node: ast.expr) -> Iterable[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield from node.value.replace(",", " ").split()
    elif isinstance(node, (ast.List, ast.Tuple)):
        for element in node.elts:
            yield from _strings(element)


def _p_options(words: list[str]) -> set[str]:
    found = set()
    for n, word in enumerate(words):
        value = None
        if word == "-p" and n + 1 < len(words):
            value = words[n + 1]
        elif word.startswith("-p") and len(word) > 2:
            value = word[2:]
        if value and not value.startswith("no:"):
            found.add(value)
    return found
