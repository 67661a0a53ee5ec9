"""The code index (``code_nodes``): modules, classes, functions and methods from ``ast``.

A selector is the dotted module path plus the qualname (``memstore.MemStore.remember``); a
``src/`` layout maps to its package path. Only statement bodies are walked, never expressions,
which keeps indexing close to the cost of ``ast.parse`` itself.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path

_SKIP_DIRS = {
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    "node_modules",
    "__pycache__",
    "build",
    "dist",
}
_SELECTOR = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\Z")
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_BLOCKS = (ast.If, ast.Try, ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While)


@dataclass(frozen=True)
class Entity:
    selector: str
    kind: str  # module | class | function | method
    name: str
    signature: str  # as written, decorators included; "module <path>" for modules
    doc: str  # first docstring line, "" when none
    file: str  # relative to the workspace root, "/"-separated
    start: int  # 1-based, first decorator line included
    end: int
    error: str | None = None  # a module whose file does not parse

    def record(self) -> dict[str, object]:
        data = asdict(self)
        if self.error is None:
            del data["error"]
        return data


def is_selector(text: str) -> bool:
    return bool(_SELECTOR.match(text))


def module_path(rel: str) -> str | None:
    """``src/pkg/mod.py`` → ``pkg.mod``; ``pkg/__init__.py`` → ``pkg``; None if not importable."""
    parts = rel[:-3].split("/")
    if parts[0] == "src" and len(parts) > 1:
        parts = parts[1:]
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    dotted = ".".join(parts)
    return dotted if is_selector(dotted) else None


def _first_line(doc: str | None) -> str:
    for line in (doc or "").strip().splitlines():
        if line.strip():
            return line.strip()
    return ""


def _docstring(body: list[ast.stmt]) -> str:
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        value = body[0].value.value
        if isinstance(value, str):
            return _first_line(value)
    return ""


def _signature(node: ast.AST, lines: list[str]) -> str:
    start = node.decorator_list[0].lineno if node.decorator_list else node.lineno
    first = node.body[0]
    if first.lineno == node.lineno:  # one-liner: `def f(): return 1`
        return lines[node.lineno - 1][node.col_offset : first.col_offset].rstrip()
    header = lines[start - 1 : first.lineno - 1]
    while header and (not header[-1].strip() or header[-1].lstrip().startswith("#")):
        header.pop()
    indent = len(header[0]) - len(header[0].lstrip()) if header else 0
    return "\n".join(line[indent:] if line[:indent].isspace() else line for line in header)


def index_source(source: str, rel: str) -> list[Entity]:
    """All entities of one file. A file that does not parse yields its module with the error."""
    dotted = module_path(rel)
    if dotted is None:
        return []
    n_lines = source.count("\n") + 1
    try:
        tree = ast.parse(source, filename=rel)
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None)
        error = f"{type(exc).__name__}: {getattr(exc, 'msg', exc)}" + (
            f" (line {line})" if line else ""
        )
        return [
            Entity(
                dotted,
                "module",
                dotted.rsplit(".", 1)[-1],
                f"module {dotted}",
                "",
                rel,
                1,
                n_lines,
                error,
            )
        ]
    lines = source.splitlines()
    out = [
        Entity(
            dotted,
            "module",
            dotted.rsplit(".", 1)[-1],
            f"module {dotted}",
            _docstring(tree.body),
            rel,
            1,
            n_lines,
        )
    ]
    _walk(tree.body, dotted, "module", lines, rel, out)
    return out


def _walk(
    body: list[ast.stmt], prefix: str, parent: str, lines: list[str], rel: str, out: list[Entity]
) -> None:
    for node in body:
        if isinstance(node, _DEFS):
            if isinstance(node, ast.ClassDef):
                kind = "class"
            else:
                kind = "method" if parent == "class" else "function"
            selector = f"{prefix}.{node.name}"
            start = node.decorator_list[0].lineno if node.decorator_list else node.lineno
            out.append(
                Entity(
                    selector,
                    kind,
                    node.name,
                    _signature(node, lines),
                    _docstring(node.body),
                    rel,
                    start,
                    node.end_lineno or start,
                )
            )
            _walk(node.body, selector, kind, lines, rel, out)
        elif isinstance(node, _BLOCKS):
            for block in (node.body, getattr(node, "orelse", []), getattr(node, "finalbody", [])):
                _walk(block, prefix, parent, lines, rel, out)
            for handler in getattr(node, "handlers", []):
                _walk(handler.body, prefix, parent, lines, rel, out)


def read_text(path: Path) -> str | None:
    """A file's text, or None for binary and non-UTF-8 files (skipped, never fatal)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


class CodeIndex:
    """Entities of every Python file under ``root``, keyed by selector; re-indexed per file."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).resolve()
        self.by_selector: dict[str, Entity] = {}
        self.by_file: dict[str, list[Entity]] = {}
        self.version = 0  # bumped on every change, so derived indexes know to refresh
        for rel in self._python_files():
            self._index_file(rel)

    def _python_files(self) -> list[str]:
        found: list[str] = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = sorted(
                d for d in dirnames if d not in _SKIP_DIRS and not d.startswith(".")
            )
            base = Path(dirpath)
            for name in sorted(filenames):
                if name.endswith(".py"):
                    path = base / name
                    if path.is_symlink() and self.root not in path.resolve().parents:
                        continue  # a link out of the workspace is not part of it
                    found.append(path.relative_to(self.root).as_posix())
        return found

    def _index_file(self, rel: str) -> None:
        for entity in self.by_file.pop(rel, []):
            if self.by_selector.get(entity.selector) is entity:
                del self.by_selector[entity.selector]
        source = read_text(self.root / rel)
        if source is None:
            return
        entities = index_source(source, rel)
        self.by_file[rel] = entities
        for entity in entities:
            # First definition wins, as for a reader scanning top to bottom; later duplicates
            # (conditional defs, overloads) stay reachable through by_file.
            self.by_selector.setdefault(entity.selector, entity)

    def reindex(self, rel: str) -> None:
        """Refresh one file after an edit (or its removal)."""
        self._index_file(rel)
        self.version += 1

    def get(self, selector: str) -> Entity | None:
        return self.by_selector.get(selector)

    def entities(self) -> list[Entity]:
        return list(self.by_selector.values())

    def __len__(self) -> int:
        return len(self.by_selector)
