"""The code index's parse cache: a file's entities on disk, keyed by the file's content.

Parsing is most of what indexing a checkout costs (pytest: ~250 files, 5.6k entities, ~1.5 s),
and every instance, rerun and CLI call opens a fresh checkout of mostly the same files. The
index still lists and reads every file itself (through ``safefs``, no link followed) and hashes
its bytes; a hit skips only ``ast.parse``, so a changed file is always parsed again.

The key is a hash of the format, the Python version (``ast`` differs between versions), the
file's path (selectors are made from it) and the digest of its bytes. The value is JSON, never
pickle: the database lives under the harness's cache dir, which no sandboxed run can reach, but
a row is validated against the file all the same and one that does not describe well-formed
entities of it is ignored (the file is parsed). Only the harness's own opening of a checkout
stores (``CodeIndex``'s first scan); what a run writes later is parsed and never stored, so
nothing a model writes makes the cache grow. SQLite in WAL mode, like the embedder's vectors:
concurrent processes share it, and a cache that fails warns once and is off for that scan.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import sys
import warnings
from pathlib import Path
from typing import Any

from ..paths import cache_dir
from .codeindex import KINDS, Entity, is_selector
from .vectorcache import BlobCache

FORMAT = "entities-v1"
_PREFIX = f"{FORMAT}\0{sys.version_info[0]}.{sys.version_info[1]}\0".encode()


class ParseCache:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._blobs: BlobCache | None = BlobCache(path, "entities")
        self.hits = 0
        self.misses = 0

    @classmethod
    def default(cls) -> ParseCache:
        """The one under ``cache_dir()``."""
        return cls(cache_dir() / "code-index.sqlite3")

    @staticmethod
    def key(rel: str, digest: bytes) -> bytes:
        return hashlib.blake2b(
            _PREFIX + rel.encode("utf-8", "surrogatepass") + b"\0" + digest
        ).digest()

    def load(self, key: bytes, rel: str, dotted: str, n_lines: int) -> list[Entity] | None:
        """The entities stored under ``key`` when they are well-formed for the file, else None."""
        if self._blobs is None:
            return None
        try:
            found = self._blobs.get_many([key]).get(key)
        except (sqlite3.Error, OSError) as exc:
            self._disable(exc)
            return None
        entities = _decode(found, rel, dotted, n_lines) if found is not None else None
        if entities is None:
            self.misses += 1
        else:
            self.hits += 1
        return entities

    def store(self, items: list[tuple[bytes, list[Entity]]]) -> None:
        if self._blobs is None or not items:
            return
        rows = [(key, _encode(entities)) for key, entities in items]
        try:
            self._blobs.put_many(rows)
        except (sqlite3.Error, OSError) as exc:
            self._disable(exc)

    def close(self) -> None:
        if self._blobs is not None:
            self._blobs.close()

    def _disable(self, exc: Exception) -> None:
        # A broken cache makes indexing as slow as it was without one; it must not stop it.
        warnings.warn(f"code index cache {self.path} disabled: {exc}", RuntimeWarning, stacklevel=3)
        if self._blobs is not None:
            self._blobs.close()
        self._blobs = None


def _encode(entities: list[Entity]) -> bytes:
    rows = [
        [e.selector, e.kind, e.name, e.signature, e.doc, e.start, e.end, e.error] for e in entities
    ]
    return json.dumps(rows, ensure_ascii=False, separators=(",", ":")).encode(
        "utf-8", "surrogatepass"
    )


def _decode(data: bytes, rel: str, dotted: str, n_lines: int) -> list[Entity] | None:
    try:
        rows = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if not isinstance(rows, list) or not rows:
        return None
    out = []
    for i, row in enumerate(rows):
        entity = _entity(row, rel, dotted, n_lines)
        if entity is None or (i == 0) != (entity.kind == "module"):
            return None
        out.append(entity)
    return out if out[0].selector == dotted else None


def _entity(row: Any, rel: str, dotted: str, n_lines: int) -> Entity | None:
    """One stored row as an entity of ``rel``, or None unless every field is what the
    indexer could have made of that file."""
    if not isinstance(row, list) or len(row) != 8:
        return None
    selector, kind, name, signature, doc, start, end, error = row
    texts = (selector, kind, name, signature, doc)
    if not all(isinstance(t, str) for t in texts) or not (error is None or isinstance(error, str)):
        return None
    lines = (start, end)
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in lines):
        return None
    if kind not in KINDS or not 1 <= start <= end <= n_lines or not is_selector(selector):
        return None
    if selector != dotted and not selector.startswith(dotted + "."):
        return None
    if name != selector.rpartition(".")[2] or "\n" in doc:
        return None
    return Entity(selector, kind, name, signature, doc, rel, start, end, error)
