"""Okapi BM25 over tokenized documents, with a tokenizer that understands code identifiers.

The postings are numpy arrays (a term's documents and counts, contiguous), so a corpus of 25,000
code entities is indexed in a fraction of a second and costs a few MB, and a query term is
scored over all its documents in one vector operation.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

_WORD = re.compile(r"[A-Za-z0-9_]+")
# An acronym stops before the capital that starts the next word: HTTPResponse → HTTP, Response.
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+[0-9]*|[A-Z]+[0-9]*|[0-9]+")
# Longer runs are not names anyone searches for (a base64 blob, a minified constant); cut, they
# cannot fill the caches below with megabyte keys.
MAX_WORD = 128


@lru_cache(maxsize=1 << 16)  # a codebase repeats its identifiers endlessly
def split_identifier(word: str) -> tuple[str, ...]:
    """``parseHTTPResponse_v2`` → ``("parse", "http", "response", "v2")``."""
    return tuple(part.lower() for chunk in word.split("_") for part in _PART.findall(chunk))


@lru_cache(maxsize=1 << 16)
def _word_tokens(word: str) -> tuple[str, ...]:
    parts = split_identifier(word)
    whole = word.lower().strip("_")
    return (*parts, whole) if len(parts) > 1 and whole else parts


def tokenize(text: str) -> list[str]:
    """Lowercased identifier parts, plus each multi-part identifier whole."""
    tokens: list[str] = []
    for word in _WORD.findall(text):
        tokens.extend(_word_tokens(word[:MAX_WORD]))
    return tokens


class BM25:
    """Okapi BM25 (Lucene's non-negative idf) over documents given as token lists."""

    def __init__(self, docs: Sequence[Sequence[str]], k1: float = 1.5, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self.n_docs = len(docs)
        vocab: dict[str, int] = {}
        lengths = np.fromiter(map(len, docs), dtype=np.int64, count=self.n_docs)
        ids = np.fromiter(
            (vocab.setdefault(term, len(vocab)) for doc in docs for term in doc),
            dtype=np.int64,
            count=int(lengths.sum()),
        )
        n = max(self.n_docs, 1)
        owner = np.repeat(np.arange(self.n_docs, dtype=np.int64), lengths)
        # One key per (term, document) pair, counted: the postings, by term then by document.
        keys, counts = np.unique(ids * n + owner, return_counts=True)
        self._vocab = vocab
        self._docs = keys % n
        self._tfs = counts.astype(np.float64)
        self._starts = np.searchsorted(keys // n, np.arange(len(vocab) + 1))
        self._avg_len = float(lengths.mean()) if self.n_docs else 0.0
        # Each document's length normalization, once: k1 * (1 - b + b * len / avg).
        ratio = b * lengths / self._avg_len if self._avg_len else lengths.astype(np.float64)
        self._norm = k1 * (1.0 - b + ratio)

    def __contains__(self, term: object) -> bool:
        """Whether some document has ``term``."""
        return term in self._vocab

    def _postings(self, term: str) -> slice:
        t = self._vocab.get(term)
        return slice(0, 0) if t is None else slice(self._starts[t], self._starts[t + 1])

    def idf(self, term: str) -> float:
        span = self._postings(term)
        df = span.stop - span.start
        return math.log(1.0 + (self.n_docs - df + 0.5) / (df + 0.5))

    def score_array(self, query: Sequence[str]) -> np.ndarray:
        """The score of every document (0 where it shares no term with ``query``)."""
        out = np.zeros(self.n_docs, dtype=np.float64)
        if not self._avg_len:
            return out
        for term, qtf in Counter(query).items():
            span = self._postings(term)
            if span.stop == span.start:
                continue
            docs, tfs = self._docs[span], self._tfs[span]
            weight = self.idf(term) * qtf
            out[docs] += weight * tfs * (self.k1 + 1.0) / (tfs + self._norm[docs])
        return out

    def scores(self, query: Sequence[str]) -> dict[int, float]:
        """Score of every document sharing a term with ``query`` (others score 0)."""
        if not self._avg_len:
            return {}
        terms = [t for t in set(query) if t in self._vocab]
        if not terms:
            return {}
        hit = np.unique(np.concatenate([self._docs[self._postings(t)] for t in terms]))
        values = self.score_array(query)[hit]
        return dict(zip(hit.tolist(), values.tolist(), strict=True))
