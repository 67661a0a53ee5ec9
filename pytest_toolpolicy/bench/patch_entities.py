"""The code entities a unified diff edits, read off the diff text alone.

A hunk carries three lines of context and, in its header, the last top-level line above it
(git's default function context: a ``class``/``def`` line, or any other statement). So the entity
holding a changed line is known exactly when its ``def``/``class`` line is inside the hunk, or
when the header is a top-level ``def`` (nothing top-level lies between it and the hunk). When the
header is a ``class`` and the changed line sits deeper than the class body, the line is in one of
its methods whose ``def`` is above the hunk: the entity is known only as "a member of the
class" (``exact`` false). Without the code at the base commit nothing closer can be said.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,(\d+))? @@ ?(.*)$")
_DEF = re.compile(r"^([ \t]*)(?:async[ \t]+def|def|class)[ \t]+([A-Za-z_]\w*)")
_CLASS = re.compile(r"^[ \t]*class[ \t]")
_TEST_PARTS = frozenset({"tests", "test", "testing"})
_STEP = 4  # the indentation of a class body below its ``class`` line, when no member shows it


@dataclass(frozen=True)
class Edited:
    """One entity a diff changes: its file, its dotted module and the names of the classes and
    functions enclosing the change, outermost first (``()``: module level)."""

    path: str
    module: str
    scope: tuple[str, ...]
    exact: bool  # False: the change is in an unnamed member of ``scope[-1]`` (a class)
    hunk: int  # inexact: the hunk's index (two hunks may be two members); exact: -1

    @property
    def name(self) -> str:
        return ".".join((self.module, *self.scope)) + ("" if self.exact else ".?")


@dataclass(frozen=True)
class Hunk:
    module: str
    start: int  # first line of the hunk in the file before the change
    length: int


@dataclass(frozen=True)
class PatchEntities:
    edited: tuple[Edited, ...]
    hunks: tuple[Hunk, ...]
    names: frozenset[str]  # every class and def name the diff shows (headers included)
    classes: frozenset[str]
    packages: frozenset[str]  # the top-level packages of the edited files

    def modules(self) -> frozenset[str]:
        return frozenset(e.module for e in self.edited)


def module_of(path: str) -> str:
    """``src/pkg/mod.py`` → ``pkg.mod``; ``pkg/__init__.py`` → ``pkg``."""
    parts = path.removesuffix(".py").split("/")
    if parts[0] in ("src", "lib") and len(parts) > 1:
        parts = parts[1:]
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


def is_source(path: str) -> bool:
    """A Python file that is not a test: the gold fix's code, where an entity is edited."""
    parts = path.split("/")
    name = parts[-1]
    if not name.endswith(".py") or _TEST_PARTS & set(parts[:-1]):
        return False
    return not (name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py")


def patch_entities(patch: str) -> PatchEntities:
    edited: list[Edited] = []
    hunks: list[Hunk] = []
    names: set[str] = set()
    classes: set[str] = set()
    path: str | None = None
    lines = patch.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("+++ "):
            target = line[4:].split("\t")[0].strip()
            if target == "/dev/null":  # a deleted file: its old name is the one edited
                target = lines[i - 1][4:].split("\t")[0].strip() if i else target
            target = target[2:] if target[:2] in ("a/", "b/") else target
            path = target if is_source(target) else None
            i += 1
            continue
        match = _HUNK.match(line)
        if not match or path is None:
            i += 1
            continue
        # The header's counts say where the hunk ends (a removed line may itself read "--- x").
        old, new = int(match.group(2) or 1), int(match.group(3) or 1)
        body: list[str] = []
        i += 1
        while i < len(lines) and (old > 0 or new > 0):
            mark = lines[i][:1]
            if mark not in (" ", "+", "-", "\\", ""):
                break  # a truncated hunk: read what is there
            old -= mark in (" ", "-", "")
            new -= mark in (" ", "+", "")
            body.append(lines[i])
            i += 1
        module = module_of(path)
        hunks.append(Hunk(module, int(match.group(1)), int(match.group(2) or 1)))
        found = _hunk_entities(path, module, match.group(4), body, len(hunks) - 1)
        edited += found.edited
        names |= found.names
        classes |= found.classes
    unique = list(dict.fromkeys(edited))
    packages = frozenset(e.module.split(".")[0] for e in unique)
    return PatchEntities(
        tuple(unique), tuple(hunks), frozenset(names), frozenset(classes), packages
    )


@dataclass
class _Found:
    edited: list[Edited]
    names: set[str]
    classes: set[str]


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" \t"))


def _hunk_entities(path: str, module: str, header: str, body: list[str], index: int) -> _Found:
    found = _Found([], set(), set())
    head = _DEF.match(header)
    # The header's entity encloses the hunk's lines until a line at or left of it closes it.
    opened: list[_Scope] = []
    if head:
        opened.append(_Scope(_indent(header), head.group(2), bool(_CLASS.match(header))))
    stack: list[_Scope] = []  # the header's entity, then the defs the hunk shows, innermost last
    stack += opened
    members: dict[int, int] = {}  # a class's indent -> the indent its members were seen at
    for raw in body:
        mark, text = raw[:1], raw[1:]
        if not text.strip():
            continue
        indent = _indent(text)
        while stack and stack[-1].indent >= indent:
            stack.pop()
        defined = _DEF.match(text)
        if defined:
            scope = _Scope(indent, defined.group(2), bool(_CLASS.match(text)))
            if stack and stack[-1].is_class:
                members.setdefault(stack[-1].indent, indent)
            found.names.add(scope.name)
            if scope.is_class:
                found.classes.add(scope.name)
            stack.append(scope)
        if mark not in ("+", "-"):
            continue
        exact = True
        if stack and stack[-1].is_class and not defined:
            # Deeper than the class body: inside a method whose ``def`` is above the hunk.
            exact = indent <= members.get(stack[-1].indent, stack[-1].indent + _STEP)
        names = tuple(s.name for s in stack)
        found.edited.append(Edited(path, module, names, exact, -1 if exact else index))
    for scope in opened:
        found.names.add(scope.name)
        if scope.is_class:
            found.classes.add(scope.name)
    return found


@dataclass(frozen=True)
class _Scope:
    indent: int
    name: str
    is_class: bool
