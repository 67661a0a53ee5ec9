"""The code index (``code_nodes``): modules, classes, functions and methods from ``ast``.

A selector is the dotted module path plus the qualname (``memstore.MemStore.remember``); a
``src/`` layout maps to its package path. Only statement bodies are walked, never expressions,
which keeps indexing close to the cost of ``ast.parse`` itself.

What is indexed: every regular ``.py`` file below the root reached without following a link. A
symbolic link — to a file or a directory, pointing inside the workspace or out — is not part of
the workspace: a link that points inside today can be retargeted out by the next sandboxed run,
and one inside would index the same code twice. FIFOs, devices, files over the read limit
(``limits.read_mb``), binary and non-UTF-8 files are not indexed either; each is in
``CodeIndex.refused`` with the reason, which an unknown selector's error names. Every read goes
through ``safefs``. A sandboxed run may change anything, so ``refresh()`` rescans after one.

Parsed files are cached on disk by content (``parsecache.py``): opening another checkout of
mostly the same files (the next instance, a CLI call) reads and hashes every file as before and
parses only the ones not seen yet.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import stat
import time
import warnings
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from .. import limits
from . import safefs
from .envelope import PrimitiveError

if TYPE_CHECKING:
    from .parsecache import ParseCache

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
KINDS = frozenset({"module", "class", "function", "method"})


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


@lru_cache(maxsize=1 << 16)  # refresh() asks it of every file of the tree, every time
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


def _signature(
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, lines: list[str]
) -> str:
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
        # The repository's own warnings (an invalid escape in an old string) are its to hear,
        # not the harness's user's: a real repository put 530 of them in an A/B's summary.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source, filename=rel)
    # RecursionError and MemoryError: pathologically nested code, which a sandboxed run can
    # write; it is a module that does not parse, not a harness fault.
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
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


def _decode(data: bytes) -> str | None:
    """UTF-8 text, or None for binary (a NUL byte) and non-UTF-8 data."""
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def read_text(path: str | os.PathLike[str]) -> str | None:
    """A file's text, or None when it is missing, binary, not UTF-8, over the read limit, or
    reached through a link. For callers holding a joined ``root / rel`` (with a resolved root,
    as ``CodeIndex.root`` and ``Toolbox.root`` are): no link anywhere on the way from the
    filesystem root is followed. ``CodeIndex.read_source`` says why instead of None."""
    path = Path(os.path.abspath(path))
    anchor = Path(path.anchor)
    try:
        data = safefs.read_bytes(anchor, path.relative_to(anchor), limits.current().read_bytes)
    except (OSError, PrimitiveError):
        return None
    return _decode(data)


Signature = tuple[int, int, int, int, int]
# A file whose timestamp is this close to the scan that indexed it may change again within the
# same timestamp granule (coarse clocks, 1-2 s filesystems) with nothing in its signature
# changing: such a file is "racy" and re-read, and compared by digest, on the next refresh.
# Local Linux filesystems stamp with a clock tick (<= 10 ms); 1 s also covers coarser ones.
_RACY_NS = 1_000_000_000


def signature(info: os.stat_result) -> Signature:
    # ctime too: a sandboxed run can set mtime back (``touch -d``), never ctime.
    return (info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino, info.st_mode)


class _Seen(NamedTuple):
    signature: Signature
    digest: bytes | None  # of the bytes read; None when the file was refused
    racy: bool
    reason: str | None  # why the file is not indexed, when it is not


def _keep_dir(name: str) -> bool:
    return name not in _SKIP_DIRS and not name.startswith(".")


class CodeIndex:
    """Entities of every Python file under ``root``, keyed by selector; re-indexed per file.

    ``refresh()`` rescans (an lstat per file) and re-indexes only new, changed and removed
    files; ``sync(rel)`` does the same for one file; ``reindex(rel)`` re-reads one file
    unconditionally. A file's entity list is replaced only when its content changed, so derived
    indexes may compare lists by identity; ``version`` is bumped whenever anything changed.

    ``cache``: the parse cache (default: the one under the cache dir; False: none), which only
    the first scan uses: it opens the checkout. Later changes are a run's, parsed file by file."""

    def __init__(self, root: str | os.PathLike[str], *, cache: ParseCache | bool = True) -> None:
        self.root = Path(root).resolve()
        self.by_selector: dict[str, Entity] = {}
        self.by_file: dict[str, list[Entity]] = {}
        self.version = 0  # bumped on every change, so derived indexes know to refresh
        self._seen: dict[str, _Seen] = {}  # every regular, importable .py file last looked at
        self._listing: dict[str, str] = {}  # links and non-regular files the last scan met
        self._gone: dict[str, str] = {}  # files that were there and no longer are
        self._orphans: set[str] = set()  # visible selectors whose entity was dropped
        self._cache = _parse_cache(cache)
        self._parsed: list[tuple[bytes, list[Entity]]] = []  # misses of the cache, to store
        try:
            self.refresh()
            if self._cache is not None:
                self._cache.store(self._parsed)
        finally:
            if self._cache is not None:
                self._cache.close()
            self._cache, self._parsed = None, []
        self.version = 0

    # -- reading the tree ---------------------------------------------------------------

    def refresh(self) -> list[str]:
        """Rescan the tree; re-index the files that are new, changed (lstat signature, or a
        racy one whose digest changed) or removed. Returns their relative paths, sorted."""
        now = time.time_ns()
        found, self._listing = safefs.scan(self.root, ".py", _keep_dir)
        limit = limits.current().read_bytes
        changed = []
        for rel in [rel for rel in self._seen if rel not in found]:
            if self._apply(rel, None, self._why_gone(rel), limit, now):
                changed.append(rel)
        for rel, info in found.items():
            if module_path(rel) is None:
                continue
            seen = self._seen.get(rel)
            stale = seen is None or seen.racy or seen.signature != signature(info)
            if stale and self._apply(rel, info, None, limit, now):
                changed.append(rel)
        self._settle(bool(changed))
        return sorted(changed)

    def _why_gone(self, rel: str) -> str:
        """Why a file the scan no longer found is gone: it, or a directory on its way, is now
        a link (or a FIFO...), or it was removed."""
        parts = rel.split("/")
        for n in range(len(parts), 0, -1):
            reason = self._listing.get("/".join(parts[:n]))
            if reason is not None:
                return reason
        return f"{rel} no longer exists"

    def sync(self, rel: str) -> bool:
        """``refresh`` for one file (one lstat when it is unchanged); True if its entities
        changed. For a primitive about to use the file's spans: they match the file as it is."""
        info, reason = self._look(rel)
        seen = self._seen.get(rel)
        if info is not None and seen is not None and not seen.racy:
            if seen.signature == signature(info):
                return False
        elif info is None and seen is None and rel not in self.by_file:
            return False
        changed = self._apply(rel, info, reason, limits.current().read_bytes, time.time_ns())
        self._settle(changed)
        return changed

    def reindex(self, rel: str) -> None:
        """Re-read one file after an edit (or its removal), whatever its signature says."""
        info, reason = self._look(rel)
        self._seen.pop(rel, None)
        self._apply(rel, info, reason, limits.current().read_bytes, time.time_ns())
        self._settle(True)

    def read_source(self, rel: str) -> str:
        """The text of ``rel`` as it is now, through ``safefs``; a ``PrimitiveError`` (an
        ``UnsafePath`` for a link, a FIFO, a file over the limit) saying why it cannot be read."""
        try:
            data = safefs.read_bytes(self.root, rel, limits.current().read_bytes)
        except FileNotFoundError:
            raise PrimitiveError(f"{rel} no longer exists") from None
        except OSError as exc:
            raise PrimitiveError(f"cannot read {rel}: {exc.strerror or exc}") from None
        text = _decode(data)
        if text is None:
            raise PrimitiveError(f"refusing {rel}: binary or not UTF-8 text")
        return text

    def _look(self, rel: str) -> tuple[os.stat_result | None, str | None]:
        """``rel``'s lstat if it is a regular file reached with no link, else why not."""
        try:
            info = safefs.lstat(self.root, rel)
        except FileNotFoundError:
            return None, f"{rel} no longer exists"
        except PrimitiveError as exc:
            return None, str(exc)
        except OSError as exc:
            return None, f"cannot read {rel}: {exc.strerror or exc}"
        if stat.S_ISLNK(info.st_mode):
            return None, f"refusing {rel}: it is a symbolic link"
        if not stat.S_ISREG(info.st_mode):
            return None, f"refusing {rel}: not a regular file"
        return info, None

    def _apply(
        self, rel: str, info: os.stat_result | None, reason: str | None, limit: int, now: int
    ) -> bool:
        """Bring one file's entities in line with the file; True when they changed."""
        had = rel in self.by_file
        if info is None or not rel.endswith(".py") or module_path(rel) is None:
            self._seen.pop(rel, None)
            self._drop(rel)
            if reason is not None and had:
                self._gone[rel] = reason
            return had
        self._gone.pop(rel, None)
        data: bytes | None = None
        try:
            data = safefs.read_bytes(self.root, rel, limit)
        except PrimitiveError as exc:
            reason = str(exc)
        except OSError as exc:  # e.g. a mode a sandboxed run changed
            reason = f"cannot read {rel}: {exc.strerror or exc}"
        text = _decode(data) if data is not None else None
        if data is not None and text is None:
            reason = f"refusing {rel}: binary or not UTF-8 text"
        digest = hashlib.blake2b(data).digest() if data is not None else None
        racy = max(info.st_mtime_ns, info.st_ctime_ns) >= now - _RACY_NS
        old = self._seen.get(rel)
        self._seen[rel] = _Seen(signature(info), digest, racy, None if text is not None else reason)
        if had and text is not None and old is not None and old.digest == digest:
            return False  # touched or rewritten as it was: the entities stand
        self._drop(rel)
        if text is None or digest is None:
            return had
        entities = self._parse(rel, text, digest)
        self.by_file[rel] = entities
        for entity in entities:
            # First definition wins, as for a reader scanning top to bottom; later duplicates
            # (conditional defs, overloads) stay reachable through by_file.
            self.by_selector.setdefault(entity.selector, entity)
        return True

    def _parse(self, rel: str, text: str, digest: bytes) -> list[Entity]:
        """``index_source``, or what the parse cache holds for these bytes at this path."""
        dotted = module_path(rel)
        if self._cache is None or dotted is None:
            return index_source(text, rel)
        key = self._cache.key(rel, digest)
        entities = self._cache.load(key, rel, dotted, text.count("\n") + 1)
        if entities is None:
            entities = index_source(text, rel)
            self._parsed.append((key, entities))
        return entities

    def _drop(self, rel: str) -> None:
        for entity in self.by_file.pop(rel, []):
            if self.by_selector.get(entity.selector) is entity:
                del self.by_selector[entity.selector]
                self._orphans.add(entity.selector)

    def _settle(self, changed: bool) -> None:
        """After a batch: a selector whose visible entity was dropped falls to the next file
        that defines it (a module shadowed by a same-named one, e.g. src/pkg and pkg)."""
        orphans = {s for s in self._orphans if s not in self.by_selector}
        self._orphans.clear()
        if orphans:
            for entities in self.by_file.values():
                for entity in entities:
                    if entity.selector in orphans:
                        self.by_selector.setdefault(entity.selector, entity)
        if changed:
            self.version += 1

    # -- lookups ------------------------------------------------------------------------

    @property
    def refused(self) -> dict[str, str]:
        """Paths not indexed, with the reason: links, FIFOs and devices, unreadable, oversized,
        binary and non-UTF-8 files, and indexed files that are gone since."""
        reads = {rel: seen.reason for rel, seen in self._seen.items() if seen.reason}
        return {**self._gone, **reads, **self._listing}

    def why_missing(self, selector: str) -> str | None:
        """Why ``selector`` is not in the index when the file (or package directory) that would
        define it is refused or gone; None when nothing is known (or its module is indexed)."""
        table: dict[str, str] = {}
        for rel, reason in self.refused.items():
            dotted = module_path(rel if rel.endswith(".py") else f"{rel}.py")
            if dotted is not None:
                table.setdefault(dotted, reason)
        parts = selector.split(".")
        for n in range(len(parts), 0, -1):
            prefix = ".".join(parts[:n])
            if prefix in self.by_selector:
                return None
            if prefix in table:
                return table[prefix]
        return None

    def get(self, selector: str) -> Entity | None:
        return self.by_selector.get(selector)

    def entities(self) -> list[Entity]:
        return list(self.by_selector.values())

    def __len__(self) -> int:
        return len(self.by_selector)


def _parse_cache(cache: ParseCache | bool) -> ParseCache | None:
    if cache is False:
        return None
    if cache is True:
        from .parsecache import ParseCache

        return ParseCache.default()
    return cache
