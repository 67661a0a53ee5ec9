"""``search_code``: summarized, capped embedding retrieval over code entities.

Each entity is reduced to a short summary (kind, selector, signature, first docstring line and
the identifiers its own lines use), embedded once and cached on disk; a query ranks entities by
cosine similarity. When the embedding model cannot be loaded, BM25 over the same summaries
ranks instead and the envelope says why. Bodies are never returned.
"""

from __future__ import annotations

import hashlib
import keyword
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .bm25 import BM25, split_identifier, tokenize
from .codeindex import CodeIndex, Entity, read_text
from .embedder import EmbedderUnavailable, TextEmbedder, load_embedder
from .envelope import Envelope, fail, ok
from .specs import check_args

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TOP_NAME = re.compile(r"(?:async\s+def|def|class)\s+(\w+)|(\w+)\s*(?::[^=\n]*)?=(?!=)")
_MAX_IDENTIFIERS = 30
_MAX_PART = 160  # chars of a signature or docstring line in a summary
# Embedding cost grows with tokens (~0.3 ms each on two cores); this keeps a summary near 64.
_MAX_TEXT = 280
_NOISE = frozenset(k.lower() for k in keyword.kwlist) | {
    "self", "cls", "args", "kwargs", "the", "an", "of", "to", "is", "in", "be", "it", "this",
    "that", "for", "on", "by", "with", "are", "if", "or", "and", "as", "at", "from", "not",
}  # fmt: skip


@dataclass(frozen=True)
class Summary:
    entity: Entity
    text: str  # what is embedded
    terms: str  # what BM25 tokenizes, only when it is needed


@dataclass
class _FileSummaries:
    source: list[Entity]  # the index's list they were built from: a new list means re-summarize
    summaries: list[Summary]
    digest: str
    vectors: np.ndarray | None = None


def summarize_file(entities: list[Entity], source: str | None) -> list[Summary]:
    """One summary per entity of a file; only this file's text is read, nothing re-parsed."""
    lines = source.splitlines() if source is not None else []
    children: dict[str, list[Entity]] = defaultdict(list)
    for entity in entities:
        children[entity.selector.rpartition(".")[0]].append(entity)
    return [_summarize(e, lines, children.get(e.selector, [])) for e in entities]


def _summarize(entity: Entity, lines: list[str], children: list[Entity]) -> Summary:
    covered = {n for child in children for n in range(child.start, child.end + 1)}
    skip = 0 if entity.kind == "module" else entity.signature.count("\n") + 1
    span = range(entity.start + skip, min(entity.end, len(lines)) + 1)  # the file may have changed
    own = [lines[n - 1] for n in span if n not in covered]
    names = [child.name for child in children]
    if entity.kind == "module":  # its own lines are the top level: defs (if unparsed), assignments
        found = (_TOP_NAME.match(line) for line in own if line[:1].isalpha() or line[:1] == "_")
        names += [m.group(1) or m.group(2) for m in found if m]
        names = [n for n in names if not n.startswith("__")]  # __all__, __version__: no meaning
        words = list(dict.fromkeys(n for n in names if n.lower() not in _NOISE))[:_MAX_IDENTIFIERS]
        head = f"module {entity.selector}"
    else:
        counts = Counter(_IDENT.findall("\n".join(own)))
        ranked = [w for w, _ in counts.most_common()]  # stable: first use breaks ties
        signature = " ".join(entity.signature.split())[:_MAX_PART]
        head = f"{entity.kind} {entity.selector}: {signature}"
        said = set(tokenize(f"{head} {entity.doc}"))  # words the summary already has
        words = []
        for w in dict.fromkeys(names + ranked):
            if len(w) > 1 and w.lower() not in _NOISE and not set(split_identifier(w)) <= said:
                words.append(w)
                if len(words) == _MAX_IDENTIFIERS:
                    break
    doc = entity.doc[:_MAX_PART]
    spoken = dict.fromkeys(p for w in words for p in split_identifier(w) if p not in _NOISE)
    text = head + (f" — {doc}" if doc else "") + (f" | {' '.join(spoken)}" if spoken else "")
    if len(text) > _MAX_TEXT:
        text = text[: text.rfind(" ", 0, _MAX_TEXT + 1)].rstrip(" |—") or text[:_MAX_TEXT]
    # The name counts twice: a query naming an entity should prefer it to its parent's listing.
    return Summary(entity, text, " ".join([entity.name, head, doc, *words]))


class CodeSearch:
    """Entity search by behaviour description; summaries refresh per changed file."""

    def __init__(
        self,
        index: CodeIndex,
        embedder: TextEmbedder | None = None,
        *,
        load: Callable[[], TextEmbedder] = load_embedder,
    ) -> None:
        self.index = index
        self._embedder = embedder
        self._load = load
        self.ranker_note: str | None = None  # set once embedding is found unavailable
        self._files: dict[str, _FileSummaries] = {}
        self._version: int | None = None
        self._flat: list[tuple[_FileSummaries, int]] = []  # the visible summaries, in file order
        self._selectors: list[str] = []
        self._matrix: np.ndarray | None = None
        self._bm25: BM25 | None = None

    def refresh(self) -> str:
        """Bring summaries (and vectors, while embedding works) up to date; return the ranker."""
        if self._version != self.index.version:
            self._sync()
            self._version = self.index.version
        if self.ranker_note is None and self._embedder is None:
            try:
                self._embedder = self._load()
            except EmbedderUnavailable as exc:
                self._unavailable(exc.reason)
        if self.ranker_note is None and self._embedder is not None:
            self._embed_stale(self._embedder)
        return "bm25" if self.ranker_note else "embed"

    def _embed_stale(self, embedder: TextEmbedder) -> None:
        stale = [f for f in self._files.values() if f.vectors is None]
        if not stale:
            return
        try:
            vectors = embedder.embed([s.text for f in stale for s in f.summaries])
        except EmbedderUnavailable as exc:
            self._unavailable(exc.reason)
            return
        offsets = np.cumsum([len(f.summaries) for f in stale])[:-1]
        for f, part in zip(stale, np.split(vectors, offsets), strict=True):
            f.vectors = part

    def _unavailable(self, reason: str) -> None:
        self.ranker_note = f"embedding model unavailable: {reason}; ranked with bm25"

    def _sync(self) -> None:
        current = self.index.by_file
        for rel in [rel for rel in self._files if rel not in current]:
            del self._files[rel]
        for rel, entities in current.items():
            old = self._files.get(rel)
            if old is not None and old.source is entities:
                continue
            source = read_text(self.index.root / rel) if entities else None
            summaries = summarize_file(entities, source)
            digest = hashlib.sha256("\0".join(s.text for s in summaries).encode()).hexdigest()
            vectors = old.vectors if old is not None and old.digest == digest else None
            self._files[rel] = _FileSummaries(entities, summaries, digest, vectors)
        # Which duplicate selector is visible can change with any file, so re-flatten.
        visible = self.index.by_selector
        self._flat = [
            (f, i)
            for f in self._files.values()
            for i, s in enumerate(f.summaries)
            if visible.get(s.entity.selector) is s.entity
        ]
        self._selectors = [f.summaries[i].entity.selector for f, i in self._flat]
        self._matrix = self._bm25 = None

    def search(self, query: str, cap: int = 8) -> Envelope:
        """data = ``{"query", "ranker", "ranker_note", "matches": [{"selector", "kind",
        "signature", "doc", "file", "start", "score"}], "total_entities", "truncated"}``."""
        _, reason = check_args("search_code", {"query": query, "cap": cap})
        if reason:
            return fail(reason)
        query = query.strip()
        if not query:
            return fail("empty query")
        ranker = self.refresh()
        flat = self._flat
        scores = np.zeros(len(flat), dtype=np.float64)
        if flat and ranker == "embed":
            scores, ranker = self._cosine(query)
        if flat and ranker == "bm25":
            if self._bm25 is None:
                self._bm25 = BM25([tokenize(f.summaries[i].terms) for f, i in flat])
            for i, score in self._bm25.scores(tokenize(query)).items():
                scores[i] = score
        picked, candidates = _top(scores, self._selectors, cap)
        matches = [_match(flat[i][0].summaries[flat[i][1]].entity, scores[i]) for i in picked]
        return ok(
            {
                "query": query,
                "ranker": ranker,
                "ranker_note": self.ranker_note,
                "matches": matches,
                "total_entities": len(flat),
                "truncated": candidates > cap,
            }
        )

    def _cosine(self, query: str) -> tuple[np.ndarray, str]:
        assert self._embedder is not None
        try:
            vector = self._embedder.embed([query])[0]
        except EmbedderUnavailable as exc:
            self._unavailable(exc.reason)
            return np.zeros(len(self._flat)), "bm25"
        if self._matrix is None:
            self._matrix = np.stack([_vectors(f)[i] for f, i in self._flat])
        return self._matrix @ vector, "embed"


def _vectors(f: _FileSummaries) -> np.ndarray:
    if f.vectors is None:
        raise RuntimeError("search_code: a file's summaries were never embedded")
    return f.vectors


def _top(scores: np.ndarray, selectors: list[str], cap: int) -> tuple[list[int], int]:
    """The best ``cap`` positive scores (desc, then selector) and how many were positive."""
    candidates = np.flatnonzero(scores > 0)
    rounded = np.round(scores[candidates], 4)
    if len(candidates) > cap:
        kth = np.partition(rounded, len(rounded) - cap)[len(rounded) - cap]
        keep = rounded >= kth  # ties at the cut compete on selector below
        shortlist, short_rounded = candidates[keep], rounded[keep]
    else:
        shortlist, short_rounded = candidates, rounded
    order = sorted(
        range(len(shortlist)), key=lambda j: (-short_rounded[j], selectors[shortlist[j]])
    )
    return [int(shortlist[j]) for j in order[:cap]], len(candidates)


def _match(entity: Entity, score: float) -> dict[str, object]:
    return {
        "selector": entity.selector,
        "kind": entity.kind,
        "signature": entity.signature,
        "doc": entity.doc,
        "file": entity.file,
        "start": entity.start,
        "score": round(float(score), 4),
    }
