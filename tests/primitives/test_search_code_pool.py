"""search_code on a corpus larger than its pool: BM25 picks the query's candidates, only those
(and the query) are embedded, cosine ranks them; what is ranked never depends on which vectors
happen to be known already."""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

from pytest_toolpolicy.primitives.bm25 import BM25, tokenize
from pytest_toolpolicy.primitives.codeindex import CodeIndex
from pytest_toolpolicy.primitives.embedder import load_embedder
from pytest_toolpolicy.primitives.search_code import CodeSearch, _inflections

from .test_search_code_bounds import SlowEmbedder

TOPICS = [
    ("session", "cookie"),
    ("socket", "timeout"),
    ("image", "thumbnail"),
    ("invoice", "currency"),
    ("parser", "token"),
    ("thread", "lock"),
]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A few hundred entities: six topic modules of 30 functions each, and the one the tests
    look for."""
    root = tmp_path / "repo"
    root.mkdir()
    for a, b in TOPICS:
        defs = [
            f'def {a}_{b}_{k}(value):\n    """Handle the {a} {b} case {k}."""\n    return value\n'
            for k in range(30)
        ]
        (root / f"{a}s.py").write_text("\n\n".join(defs))
    (root / "store.py").write_text(
        "def save_record(record, path):\n"
        '    """Write one record to disk so that it survives a restart."""\n'
        "    open(path, 'a').write(repr(record))\n\n\n"
        "def load_records(path):\n"
        '    """Read back every record saved so far."""\n'
        "    return open(path).read().splitlines()\n"
    )
    return root


def _selectors(data: dict) -> list[str]:
    return [m["selector"] for m in data["matches"]]


def test_only_the_candidates_and_the_query_are_embedded(repo: Path) -> None:
    index = CodeIndex(repo)
    assert len(index) > 150
    embedder = SlowEmbedder(per_text=0)
    search = CodeSearch(index, embedder, pool=20)
    data = search.search("socket timeout while saving")["data"]
    assert data["ranker"] == "bm25+embed" and data["ranker_note"] is None
    assert data["total_entities"] == len(index)
    embedded = embedder.seen
    assert embedded[-1] == "socket timeout while saving"
    assert len(embedded) == 21  # the pool, then the query
    summaries = {s.text: s.entity.selector for f in search._files.values() for s in f.summaries}
    picked = {summaries[text] for text in embedded[:-1]}
    assert "store.save_record" in picked  # by its inflection: "saving" is "save" here
    assert {s.split(".")[0] for s in picked} == {"sockets", "store"}, picked
    assert set(_selectors(data)) <= picked


def test_a_repeated_query_embeds_nothing_and_another_only_its_new_candidates(repo: Path) -> None:
    embedder = SlowEmbedder(per_text=0)
    search = CodeSearch(CodeIndex(repo), embedder, pool=20)
    first = search.search("thread lock")["data"]
    before = len(embedder.seen)
    assert search.search("thread lock")["data"] == first
    assert len(embedder.seen) == before + 1  # the query: this embedder has no cache
    search.search("lock the thread and save a record")
    new = embedder.seen[before + 1 : -1]  # the query is last
    owners = {s.text: s.entity.selector for f in search._files.values() for s in f.summaries}
    assert new and {owners[text].split(".")[0] for text in new} == {"store"}  # threads' are known


class CachedFake:
    """A deterministic embedder over one shared cache, counting what it computes."""

    model_id = "fake"

    def __init__(self, cache: dict[str, np.ndarray]) -> None:
        self.cache = cache
        self.computed = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        for text in texts:
            if text not in self.cache:
                self.computed += 1
                vector = np.random.default_rng(list(text.encode())).normal(size=16)
                self.cache[text] = (vector / np.linalg.norm(vector)).astype(np.float32)
        return np.stack([self.cache[t] for t in texts]) if texts else np.zeros((0, 16))


def test_what_is_ranked_does_not_depend_on_what_is_already_embedded(repo: Path) -> None:
    """A search over a cache holding every vector ranks what a cold one ranks."""
    query = "handle the parser token case"
    cold = CodeSearch(CodeIndex(repo), CachedFake({}), pool=16).search(query)["data"]
    known: dict[str, np.ndarray] = {}
    CodeSearch(CodeIndex(repo), CachedFake(known), pool=10_000).refresh()  # every vector
    warm_embedder = CachedFake(known)
    warm = CodeSearch(CodeIndex(repo), warm_embedder, pool=16).search(query)["data"]
    assert warm == cold and warm_embedder.computed == 1  # the query
    assert {s.split(".")[0] for s in _selectors(warm)} == {"parsers"}


def test_another_checkout_of_the_same_code_embeds_nothing(repo: Path, tmp_path: Path) -> None:
    """Vectors are cached by text: another commit or instance with the same code reuses them."""
    query = "write a record to disk"
    first = load_embedder()
    cold = CodeSearch(CodeIndex(repo), first, pool=16).search(query)["data"]
    assert cold["ranker"] == "bm25+embed" and _selectors(cold)[0] == "store.save_record"
    assert 0 < first.embedded <= 16 + 1
    copy = tmp_path / "copy"
    shutil.copytree(repo, copy)
    other = load_embedder()
    assert CodeSearch(CodeIndex(copy), other, pool=16).search(query)["data"] == cold
    assert other.embedded == 0


def test_a_query_sharing_no_word_with_the_code_says_so(repo: Path) -> None:
    embedder = SlowEmbedder(per_text=0)
    data = CodeSearch(CodeIndex(repo), embedder, pool=20).search("zebra quokka")["data"]
    assert data["matches"] == [] and data["ranker"] == "bm25+embed"
    assert data["ranker_note"] == "no entity shares a word with the query: nothing to rank"
    assert embedder.seen == []


def test_the_budget_bounds_the_candidates_embedding_too(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLPOLICY_LIMITS", "search_s=0.2")
    embedder = SlowEmbedder(per_text=0.01)
    search = CodeSearch(CodeIndex(repo), embedder, pool=100)
    began = time.monotonic()
    data = search.search("handle the case")["data"]
    assert time.monotonic() - began < 0.2 + 1.0
    assert data["ranker"] == "bm25" and data["matches"]
    note = re.fullmatch(
        r"embedding incomplete: (\d+) of the 100 best bm25 candidates \(of (\d+) entities\)"
        r" embedded within 0\.2s \(limit search_s\); the next search_code call continues",
        data["ranker_note"],
    )
    assert note and 0 < int(note[1]) < 100 and int(note[2]) == data["total_entities"]
    for _ in range(40):
        data = search.search("handle the case")["data"]
        if data["ranker"] != "bm25":
            break
    assert data["ranker"] == "bm25+embed"
    texts = embedder.seen[:-1]  # the last one is the query
    assert len(texts) == len(set(texts)) == 100  # the candidates, each once


def test_inflections_are_forms_the_corpus_has() -> None:
    bm25 = BM25([tokenize("save record value"), tokenize("load records")])
    assert _inflections("saved", bm25) == ["save"]
    assert _inflections("saving", bm25) == ["save"]
    assert _inflections("values", bm25) == ["value"]
    assert _inflections("records", bm25) == ["record"]  # "records" itself is there too
    assert _inflections("loads", bm25) == ["load"]
    assert _inflections("is", bm25) == [] and _inflections("zebras", bm25) == []
