"""search_code's bounds: a call's embedding work stops at ``limits.search_s`` (BM25 ranks that
call, the next continues), and no entity or query size makes a call's memory unbounded. Most
tests here embed the corpus whole (``pool=WHOLE``); the last ones bound a large corpus's work
to its query's candidates."""

from __future__ import annotations

import re
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from pytest_toolpolicy.primitives import bm25, search_code
from pytest_toolpolicy.primitives.bm25 import split_identifier
from pytest_toolpolicy.primitives.codeindex import CodeIndex
from pytest_toolpolicy.primitives.embedder import EmbedderUnavailable
from pytest_toolpolicy.primitives.search_code import CodeSearch

N_FUNCS = 120
WHOLE = 10_000  # a pool larger than any corpus here: every entity is embedded
INCOMPLETE = re.compile(
    r"embedding index incomplete: ([\d,]+) of ([\d,]+) entities embedded within 0\.3s "
    r"\(limit search_s\); the next search_code call continues"
)


class SlowEmbedder:
    """5 ms a text, and a record of every batch it was given."""

    model_id = "slow"

    def __init__(self, per_text: float = 0.005) -> None:
        self.per_text = per_text
        self.batches: list[list[str]] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.batches.append(list(texts))
        time.sleep(self.per_text * len(texts))
        out = np.zeros((len(texts), 8), dtype=np.float32)
        for row, text in zip(out, texts, strict=True):
            row[hash(text) % 8] = 1.0
        return out

    @property
    def seen(self) -> list[str]:
        return [text for batch in self.batches for text in batch]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    for n in range(N_FUNCS // 10):
        defs = [
            f'def handler_{n}_{k}(value):\n    """Handle case {n} {k}."""\n    return value\n'
            for k in range(10)
        ]
        (root / f"mod{n}.py").write_text("\n\n".join(defs))
    (root / "special.py").write_text(
        'def reconcile_ledger_entries(ledger):\n    """Match debits with credits."""\n'
    )
    return root


@pytest.fixture
def tight(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLPOLICY_LIMITS", "search_s=0.3")


def _unavailable() -> None:
    raise EmbedderUnavailable("not in this test")


def _counts(note: str) -> tuple[int, int]:
    found = INCOMPLETE.fullmatch(note)
    assert found, note
    return int(found[1].replace(",", "")), int(found[2].replace(",", ""))


@pytest.mark.usefixtures("tight")
def test_a_slow_embedding_stops_at_the_budget_and_bm25_ranks_meanwhile(repo: Path):
    embedder = SlowEmbedder()
    search = CodeSearch(CodeIndex(repo), embedder, pool=WHOLE)
    began = time.monotonic()
    data = search.search("reconcile ledger entries")["data"]
    assert time.monotonic() - began < 0.3 + 1.0  # the budget, and at most about one chunk more
    assert data["ranker"] == "bm25"
    done, total = _counts(data["ranker_note"])
    assert total == data["total_entities"] == len(CodeIndex(repo))
    assert 0 < done < total and done == len(embedder.seen)
    assert data["matches"][0]["selector"] == "special.reconcile_ledger_entries"


@pytest.mark.usefixtures("tight")
def test_the_next_call_continues_and_nothing_is_embedded_twice(repo: Path):
    # 1.3 s of embedding in all: a call stops past its 0.3 s with at most one chunk more (itself
    # sized to the time left), so however slow the rest of a call is, no two calls finish it.
    embedder = SlowEmbedder(per_text=0.01)
    search = CodeSearch(CodeIndex(repo), embedder, pool=WHOLE)
    progress = []
    for _ in range(40):
        data = search.search("reconcile ledger entries")["data"]
        if data["ranker"] == "embed":
            break
        progress.append(_counts(data["ranker_note"])[0])
    assert len(progress) >= 2 and progress == sorted(set(progress))  # every call got further
    assert data["ranker"] == "embed" and data["ranker_note"] is None
    texts = embedder.seen[:-1]  # the last one is the query
    assert len(texts) == len(set(texts)) == data["total_entities"]


def test_without_a_tight_budget_one_call_embeds_everything(repo: Path):
    embedder = SlowEmbedder(per_text=0)
    search = CodeSearch(CodeIndex(repo), embedder, pool=WHOLE)
    data = search.search("reconcile ledger entries")["data"]
    assert data["ranker"] == "embed" and data["ranker_note"] is None


def test_embedding_goes_in_bounded_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(search_code, "_CHUNK_MAX", 100)
    root = tmp_path / "many"
    root.mkdir()
    for n in range(10):
        (root / f"m{n}.py").write_text("".join(f"def f{n}_{k}(): pass\n" for k in range(50)))
    embedder = SlowEmbedder(per_text=0)
    assert CodeSearch(CodeIndex(root), embedder, pool=WHOLE).refresh() == "embed"
    sizes = [len(batch) for batch in embedder.batches]
    assert sum(sizes) == 510 and max(sizes) <= 100  # 500 functions, 10 modules


def test_a_huge_entity_or_query_leaves_little_behind(tmp_path: Path):
    name = "handle_" + "x" * 200_000
    doc = "word " * 100_000
    body = "\n".join(f"    v{n} = u{n}" for n in range(20_000))
    root = tmp_path / "huge"
    root.mkdir()
    (root / "big.py").write_text(f'def {name}(a):\n    """{doc}"""\n{body}\n')
    index = CodeIndex(root)
    split_identifier.cache_clear()
    bm25._word_tokens.cache_clear()
    embedder = SlowEmbedder(per_text=0)
    query = f"handle {'q' * 1_000_000}"  # a huge query is cut too
    tracemalloc.start()
    try:
        search = CodeSearch(index, embedder)
        data = search.search(query)["data"]
        kept, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert data["ranker"] == "embed" and len(data["query"]) == search_code._MAX_QUERY
    assert embedder.batches[-1] == [data["query"]]
    bm25_data = CodeSearch(index, load=_unavailable).search(query)["data"]
    assert bm25_data["matches"][0]["selector"] == f"big.{name}"
    summaries = [s for f in search._files.values() for s in f.summaries]
    assert max(len(s.text) for s in summaries) <= search_code._MAX_TEXT
    assert max(len(s.terms) for s in summaries) < 5_000
    # Summaries, vectors, postings and the tokenizer's caches: nothing near the entity's size.
    assert kept < 200_000, kept


def test_a_huge_word_is_cut_before_the_tokenizer_caches_it():
    tokens = bm25.tokenize("parse " + "Ab" * 100_000 + " config")
    assert tokens[0] == "parse" and tokens[-1] == "config"
    assert max(map(len, tokens)) <= bm25.MAX_WORD
