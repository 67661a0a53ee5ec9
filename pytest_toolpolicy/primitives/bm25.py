"""Okapi BM25 over tokenized documents, with a tokenizer that understands code identifiers."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

_WORD = re.compile(r"[A-Za-z0-9_]+")
# An acronym stops before the capital that starts the next word: HTTPResponse → HTTP, Response.
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+[0-9]*|[A-Z]+[0-9]*|[0-9]+")


@lru_cache(maxsize=1 << 16)  # a codebase repeats its identifiers endlessly
def split_identifier(word: str) -> tuple[str, ...]:
    """``parseHTTPResponse_v2`` → ``("parse", "http", "response", "v2")``."""
    return tuple(part.lower() for chunk in word.split("_") for part in _PART.findall(chunk))


def tokenize(text: str) -> list[str]:
    """Lowercased identifier parts, plus each multi-part identifier whole."""
    tokens: list[str] = []
    for word in _WORD.findall(text):
        parts = split_identifier(word)
        tokens.extend(parts)
        whole = word.lower().strip("_")
        if len(parts) > 1 and whole:
            tokens.append(whole)
    return tokens


class BM25:
    """Okapi BM25 (Lucene's non-negative idf) over documents given as token lists."""

    def __init__(self, docs: Sequence[Sequence[str]], k1: float = 1.5, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self.n_docs = len(docs)
        self._lengths = [len(doc) for doc in docs]
        self._avg_len = (sum(self._lengths) / self.n_docs) if self.n_docs else 0.0
        self._postings: dict[str, list[tuple[int, int]]] = {}
        for i, doc in enumerate(docs):
            for term, tf in Counter(doc).items():
                self._postings.setdefault(term, []).append((i, tf))

    def idf(self, term: str) -> float:
        df = len(self._postings.get(term, ()))
        return math.log(1.0 + (self.n_docs - df + 0.5) / (df + 0.5))

    def scores(self, query: Sequence[str]) -> dict[int, float]:
        """Score of every document sharing a term with ``query`` (others score 0)."""
        out: dict[int, float] = {}
        if not self._avg_len:
            return out
        for term, qtf in Counter(query).items():
            postings = self._postings.get(term)
            if not postings:
                continue
            weight = self.idf(term) * qtf
            for i, tf in postings:
                norm = self.k1 * (1.0 - self.b + self.b * self._lengths[i] / self._avg_len)
                out[i] = out.get(i, 0.0) + weight * tf * (self.k1 + 1.0) / (tf + norm)
        return out
