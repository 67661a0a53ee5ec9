"""``search_symbol``: signature-only AST symbol search over the code index.

Ranking: exact name (or exact selector) > qualified-name suffix > import-path form (the query's
parts appear in order in the selector: ``memstore.MemStore.remember`` finds
``memstore.store.MemStore.remember``, as issue texts name public paths) > substring of the
selector; within a tier, ``keywords`` found in the selector, signature or docstring line lift a match.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict

from .codeindex import CodeIndex, Entity
from .envelope import Envelope, fail, ok

# Past this many substring hits the query is too unspecific to rank exhaustively.
_MAX_CANDIDATES = 5000


class _Table:
    """Lookup structures over one version of the index."""

    def __init__(self, entities: list[Entity]) -> None:
        self.entities = entities
        self.by_name: dict[str, list[int]] = defaultdict(list)
        self.by_lower_name: dict[str, list[int]] = defaultdict(list)
        for i, entity in enumerate(entities):
            self.by_name[entity.name].append(i)
            self.by_lower_name[entity.name.lower()].append(i)
        # One lowercase blob of selectors: str.find scans it in C, far faster than a Python loop.
        self.blob = "\n".join(e.selector.lower() for e in entities)
        self.starts: list[int] = []
        pos = 0
        for entity in entities:
            self.starts.append(pos)
            pos += len(entity.selector) + 1

    def substring_hits(self, needle: str) -> list[int]:
        # No selector holds a line break, and in the blob one joins two selectors: a needle with
        # one could only match across two entities, never within one.
        if "\n" in needle:
            return []
        hits: list[int] = []
        pos = self.blob.find(needle)
        while pos != -1 and len(hits) < _MAX_CANDIDATES:
            line = bisect_right(self.starts, pos) - 1
            hits.append(line)
            # Skip to the next selector: one hit per entity.
            nxt = self.starts[line + 1] if line + 1 < len(self.starts) else len(self.blob)
            pos = self.blob.find(needle, nxt)
        return hits


class SymbolSearch:
    def __init__(self, index: CodeIndex) -> None:
        self.index = index
        self._table: _Table | None = None
        self._version = -1

    def _current(self) -> _Table:
        if self._table is None or self._version != self.index.version:
            self._table = _Table(self.index.entities())
            self._version = self.index.version
        return self._table

    def search(self, query: str, keywords: list[str] | None = None, k: int = 10) -> Envelope:
        """data = ``{"query", "matches": [{"selector", "kind", "signature", "file", "start"}],
        "total": int, "truncated": bool}`` — signatures only, never bodies."""
        query = query.strip()
        if not query:
            return fail("empty query")
        table = self._current()
        tiers = _tiers(table, query)
        words = [w.lower() for w in keywords or [] if w.strip()]

        def rank(item: tuple[int, int]) -> tuple[int, int, int, str]:
            i, tier = item
            entity = table.entities[i]
            boost = 0
            if words:
                hay = f"{entity.selector}\n{entity.signature}\n{entity.doc}".lower()
                boost = sum(w in hay for w in words)
            return tier, -boost, len(entity.selector), entity.selector

        ranked = sorted(tiers.items(), key=rank)
        matches = [_match(table.entities[i]) for i, _ in ranked[:k]]
        return ok(
            {"query": query, "matches": matches, "total": len(ranked), "truncated": len(ranked) > k}
        )


def _tiers(table: _Table, query: str) -> dict[int, int]:
    """entity position → best tier (0 exact, 1 qualified suffix, 2 import path, 3 substring)."""
    tiers: dict[int, int] = {}
    last = query.rsplit(".", 1)[-1]
    dotted = "." in query
    for i in table.by_name.get(last, []):
        selector = table.entities[i].selector
        if selector == query or not dotted:
            tiers[i] = 0
        elif selector.endswith("." + query):
            tiers[i] = 1
        elif is_import_path(query, selector):
            tiers[i] = 2
    lower = query.lower()
    for i in table.by_lower_name.get(lower.rsplit(".", 1)[-1], []):
        selector = table.entities[i].selector.lower()
        if i not in tiers and (not dotted or selector == lower or selector.endswith("." + lower)):
            tiers[i] = 1
    for i in table.substring_hits(lower):
        tiers.setdefault(i, 3)
    return tiers


def is_import_path(query: str, selector: str) -> bool:
    """Whether ``query`` names ``selector`` through a shorter import path: same first and last
    part, the query's parts in order among the selector's."""
    want, have = query.split("."), selector.split(".")
    if len(want) < 2 or want[0] != have[0] or want[-1] != have[-1]:
        return False
    parts = iter(have)
    return all(part in parts for part in want)


def _match(entity: Entity) -> dict[str, object]:
    return {
        "selector": entity.selector,
        "kind": entity.kind,
        "signature": entity.signature,
        "file": entity.file,
        "start": entity.start,
    }
