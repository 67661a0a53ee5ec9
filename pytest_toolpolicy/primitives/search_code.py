"""``search_code``: summarized, capped embedding retrieval over code entities.

Each entity is reduced to a short summary (kind, selector, signature, first docstring line and
the identifiers its own lines use). A query is ranked by cosine similarity of embeddings.
When the embedding model cannot be loaded, BM25 over the same summaries ranks instead and the
envelope says why. Bodies are never returned.

A large repository is not embedded whole (pytest's 5,584 entities cost minutes on two cores):
BM25 over every summary picks the query's ``POOL`` best candidates (its words, and their plain
inflections that the corpus has), and only those, plus the query, are embedded and re-ranked by
cosine; the ranker is then ``bm25+embed``. What is ranked is a pure function of the workspace
and the query; which vectors are already known only changes how long a call takes. A corpus no
larger than the pool is embedded whole, ranker ``embed``. Vectors are cached on disk by text
(the embedder's cache), so a summary unchanged from another commit or instance costs a lookup.

A call's embedding work is bounded by ``limits.search_s``: it embeds in chunks and stops at the
budget, keeps what it embedded (in memory, and on disk through the embedder's cache), ranks
that call with BM25 over every entity and says so; the next call continues. Every summary is a
few hundred characters however large its entity, and one call holds one chunk of texts at a
time, so neither a huge entity nor a huge number of them makes a call's memory unbounded
(what stays is ~2 kB per entity: its vector slot, summary and BM25 postings).
"""

from __future__ import annotations

import hashlib
import keyword
import re
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from .. import limits
from .bm25 import BM25, MAX_WORD, split_identifier, tokenize
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
_MAX_QUERY = 2000  # chars of a query that are ranked: the model reads 256 tokens at most
# Candidates embedded per query in a corpus larger than this: 2-3 s cold on two cores. On the
# titles of pytest's 19 SWE-bench Verified issues (at one checkout), the patched file is in the
# top 8 for 13 of them, against 8 with every entity embedded: BM25's words help more than they
# cost (32 candidates: 12, 128: 10, 256: 8).
POOL = 64
# Plain inflections a query word may carry that the code's identifiers do not ("saved", "save").
_SUFFIXES = ("ing", "ed", "es", "s", "er", "ly")
# Embedding goes in chunks sized to take about _CHUNK_S each, so a call overshoots its budget by
# at most about one chunk (a cold text costs ~19 ms on two cores, a cached one ~0.05 ms).
_CHUNK_S = 1.0
_CHUNK_FIRST = 32  # one batch of the model's, before there is a pace to size chunks by
_CHUNK_MIN = 8
_CHUNK_MAX = 2048
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
    vectors: np.ndarray | None = None  # one row per summary, valid where ``known``
    known: np.ndarray | None = None  # bool per summary: its row of ``vectors`` is embedded
    tokens: list[list[str]] | None = None  # BM25's view of the summaries, made when needed

    def has(self, i: int) -> bool:
        return self.known is not None and bool(self.known[i])

    def token_lists(self) -> list[list[str]]:
        if self.tokens is None:  # kept until the file changes: an edit re-tokenizes one file
            self.tokens = [tokenize(s.terms) for s in self.summaries]
        return self.tokens

    def put(self, i: int, vector: np.ndarray) -> None:
        if self.vectors is None or self.known is None:
            self.vectors = np.zeros((len(self.summaries), len(vector)), dtype=np.float32)
            self.known = np.zeros(len(self.summaries), dtype=bool)
        self.vectors[i] = vector
        self.known[i] = True


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
    doc = entity.doc[:_MAX_PART]
    if entity.kind == "module":  # its own lines are the top level: defs (if unparsed), assignments
        found = (_TOP_NAME.match(line) for line in own if line[:1].isalpha() or line[:1] == "_")
        names += [m.group(1) or m.group(2) for m in found if m]
        # __all__, __version__: no meaning; a longer run is no name anyone searches for.
        names = [n for n in names if not n.startswith("__") and len(n) <= MAX_WORD]
        words = list(dict.fromkeys(n for n in names if n.lower() not in _NOISE))[:_MAX_IDENTIFIERS]
        head = f"module {entity.selector[:_MAX_PART]}"
    else:
        counts = Counter(_IDENT.findall("\n".join(own)))
        # Stable: first use breaks ties. A longer run is no name anyone searches for.
        ranked = [w for w, _ in counts.most_common() if len(w) <= MAX_WORD]
        signature = " ".join(entity.signature.split())[:_MAX_PART]
        head = f"{entity.kind} {entity.selector[:_MAX_PART]}: {signature}"
        said = set(tokenize(f"{head} {doc}"))  # words the summary already has
        words = []
        for w in dict.fromkeys([n for n in names if len(n) <= MAX_WORD] + ranked):
            if len(w) > 1 and w.lower() not in _NOISE and not set(split_identifier(w)) <= said:
                words.append(w)
                if len(words) == _MAX_IDENTIFIERS:
                    break
    spoken = dict.fromkeys(p for w in words for p in split_identifier(w) if p not in _NOISE)
    text = head + (f" — {doc}" if doc else "") + (f" | {' '.join(spoken)}" if spoken else "")
    if len(text) > _MAX_TEXT:
        text = text[: text.rfind(" ", 0, _MAX_TEXT + 1)].rstrip(" |—") or text[:_MAX_TEXT]
    # The name counts twice: a query naming an entity should prefer it to its parent's listing.
    return Summary(entity, text, " ".join([entity.name[:MAX_WORD], head, doc, *words]))


class CodeSearch:
    """Entity search by behaviour description; summaries refresh per changed file."""

    def __init__(
        self,
        index: CodeIndex,
        embedder: TextEmbedder | None = None,
        *,
        load: Callable[[], TextEmbedder] = load_embedder,
        pool: int = POOL,
    ) -> None:
        self.index = index
        self.pool = pool
        self._embedder = embedder
        self._load = load
        self.ranker_note: str | None = None  # set once embedding is found unavailable
        self._files: dict[str, _FileSummaries] = {}
        self._version: int | None = None
        self._flat: list[tuple[_FileSummaries, int]] = []  # the visible summaries, in file order
        self._selectors: list[str] = []
        self._bm25: BM25 | None = None

    @property
    def whole(self) -> bool:
        """Whether the corpus is small enough to be embedded whole."""
        return len(self._flat) <= self.pool

    def refresh(self, deadline: float | None = None) -> str:
        """Bring summaries up to date, and load the embedder; return the ranker a query would
        get: "embed" (a corpus embedded whole, by ``deadline``: a ``time.monotonic()`` value,
        default ``limits.search_s`` from now), "bm25+embed" (a larger corpus, whose candidates
        are embedded per query), or "bm25" when embedding is unavailable or did not finish."""
        if deadline is None:
            deadline = time.monotonic() + limits.current().search_s
        if self._version != self.index.version:
            self._sync()
            self._version = self.index.version
        if self.ranker_note is None and self._embedder is None:
            try:
                self._embedder = self._load()
            except EmbedderUnavailable as exc:
                self._unavailable(exc.reason)
        if self.ranker_note is not None or self._embedder is None:
            return "bm25"
        if not self.whole:
            return "bm25+embed"
        return "embed" if self._embed(range(len(self._flat)), deadline) else "bm25"

    def _embed(self, positions: Iterable[int], deadline: float) -> bool:
        """Embed the summaries at ``positions`` not embedded yet, in order, chunk by chunk until
        ``deadline``; True when all are."""
        embedder = self._embedder
        todo = [self._flat[p] for p in positions if not self._flat[p][0].has(self._flat[p][1])]
        if embedder is None:
            return not todo
        done, size = 0, _CHUNK_FIRST
        while done < len(todo):
            began = time.monotonic()
            if began >= deadline:
                return False
            part = todo[done : done + size]
            try:
                vectors = embedder.embed([f.summaries[i].text for f, i in part])
            except EmbedderUnavailable as exc:
                self._unavailable(exc.reason)
                return False
            for (f, i), vector in zip(part, vectors, strict=True):
                f.put(i, vector)
            done += len(part)
            # The next chunk: about _CHUNK_S of work at this chunk's pace, within the budget.
            took = max(time.monotonic() - began, 1e-6) / len(part)
            room = min(_CHUNK_S, deadline - time.monotonic())
            size = max(_CHUNK_MIN, min(_CHUNK_MAX, int(room / took)))
        return True

    def _unavailable(self, reason: str) -> None:
        self.ranker_note = f"embedding model unavailable: {reason}; ranked with bm25"

    def _incomplete(self, pool: np.ndarray, budget: float) -> str:
        done = sum(self._flat[p][0].has(self._flat[p][1]) for p in pool)
        if self.whole:
            what = f"embedding index incomplete: {done:,} of {len(pool):,} entities"
        else:
            what = (
                f"embedding incomplete: {done:,} of the {len(pool):,} best bm25 candidates"
                f" (of {len(self._flat):,} entities)"
            )
        return (
            f"{what} embedded within {budget:g}s (limit search_s); the next search_code call"
            " continues"
        )

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
            fresh = _FileSummaries(entities, summaries, digest)
            if old is not None and old.digest == digest:  # the same texts: the same vectors
                fresh.vectors, fresh.known = old.vectors, old.known
            self._files[rel] = fresh
        # Which duplicate selector is visible can change with any file, so re-flatten.
        visible = self.index.by_selector
        self._flat = [
            (f, i)
            for f in self._files.values()
            for i, summary in enumerate(f.summaries)
            if visible.get(summary.entity.selector) is summary.entity
        ]
        self._selectors = [f.summaries[i].entity.selector for f, i in self._flat]
        self._bm25 = None

    def search(self, query: str, cap: int = 8) -> Envelope:
        """data = ``{"query", "ranker", "ranker_note", "matches": [{"selector", "kind",
        "signature", "doc", "file", "start", "score"}], "total_entities", "truncated"}``."""
        _, reason = check_args("search_code", {"query": query, "cap": cap})
        if reason:
            return fail(reason)
        query = query.strip()[:_MAX_QUERY]
        if not query:
            return fail("empty query")
        budget = limits.current().search_s
        deadline = time.monotonic() + budget
        ranker = self.refresh(deadline)
        note = self.ranker_note
        flat = self._flat
        scores = np.zeros(len(flat), dtype=np.float64)
        if flat and ranker != "bm25":
            pool = self._pool(query)
            if not self._embed(pool, deadline):
                ranker, note = "bm25", self.ranker_note or self._incomplete(pool, budget)
            else:
                scores, ranker = self._cosine(query, pool, ranker)
                note = self.ranker_note
                if ranker != "bm25" and not pool.size:
                    note = "no entity shares a word with the query: nothing to rank"
        elif flat and note is None:  # embedding did not finish: refresh() embeds a whole corpus
            note = self._incomplete(np.arange(len(flat)), budget)
        if flat and ranker == "bm25":
            scores = self._bm25_index().score_array(tokenize(query))
        picked, candidates = _top(scores, self._selectors, cap)
        matches = [_match(flat[i][0].summaries[flat[i][1]].entity, scores[i]) for i in picked]
        return ok(
            {
                "query": query,
                "ranker": ranker,
                "ranker_note": note,
                "matches": matches,
                "total_entities": len(flat),
                "truncated": candidates > cap,
            }
        )

    def _bm25_index(self) -> BM25:
        if self._bm25 is None:
            self._bm25 = BM25([f.token_lists()[i] for f, i in self._flat])
        return self._bm25

    def _pool(self, query: str) -> np.ndarray:
        """Positions (in ``_flat`` order) to embed and rank: all of a small corpus, else the
        ``pool`` best by BM25 over the query's words and their inflections in the corpus."""
        if self.whole:
            return np.arange(len(self._flat))
        bm25 = self._bm25_index()
        words = tokenize(query)
        scores = bm25.score_array(words + [v for w in words for v in _inflections(w, bm25)])
        hits = np.flatnonzero(scores > 0)
        if len(hits) > self.pool:
            best = np.lexsort((hits, -scores[hits]))[: self.pool]  # score, then position
            hits = np.sort(hits[best])
        return hits

    def _cosine(self, query: str, pool: np.ndarray, ranker: str) -> tuple[np.ndarray, str]:
        scores = np.zeros(len(self._flat), dtype=np.float64)
        if not pool.size:
            return scores, ranker
        assert self._embedder is not None
        try:
            vector = self._embedder.embed([query])[0]
        except EmbedderUnavailable as exc:
            self._unavailable(exc.reason)
            return scores, "bm25"
        rows = np.stack([_vector(*self._flat[p]) for p in pool])
        scores[pool] = rows @ vector
        return scores, ranker


def _inflections(word: str, bm25: BM25) -> list[str]:
    """``word`` without a plain suffix (and with a final ``e`` restored), where the corpus has
    that form and not already ``word`` itself: ``saved`` → ``save``, ``records`` → ``record``."""
    out = []
    for suffix in _SUFFIXES:
        stem = word[: -len(suffix)]
        if word.endswith(suffix) and len(stem) >= 3:
            out += [form for form in (stem, stem + "e") if form != word and form in bm25]
    return list(dict.fromkeys(out))


def _vector(f: _FileSummaries, i: int) -> np.ndarray:
    if f.vectors is None or not f.has(i):
        raise RuntimeError("search_code: a ranked summary was never embedded")
    return f.vectors[i]


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
