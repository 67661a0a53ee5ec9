"""Retrieval (spec §4.2, §7 phase 4): the keyword map, ranking, default 4, cap 5, the gates."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pytest_toolpolicy.policy.config import PolicyConfig
from pytest_toolpolicy.policy.registry import RESERVED, TOOL_NAMES
from pytest_toolpolicy.policy.retrieve import (
    CAP,
    DEFAULT_4,
    Candidates,
    keyword_scores,
    retrieve,
    tool_text,
)
from pytest_toolpolicy.primitives.embedder import EmbedderUnavailable, load_embedder

CONFIG = PolicyConfig()
EMBED = CONFIG.with_gate("retrieve.embed")


@pytest.mark.parametrize("word", ["fix", "patch", "FIX", "Patching"])
def test_fix_or_patch_includes_edit_entity(word: str):
    assert "edit_entity" in retrieve(f"please {word} the discount", "", CONFIG).tools


@pytest.mark.parametrize("word", ["test", "pytest", "TEST"])
def test_test_or_pytest_includes_run_test(word: str):
    assert "run_test" in retrieve(f"{word} is red", "", CONFIG).tools


def test_the_latest_observation_counts_too():
    assert retrieve("", "run_test, tests/test_cart.py, failed", CONFIG).tools[0] == "run_test"


@pytest.mark.parametrize("issue", ["", "   ", "the discount is wrong", "ça ne marche pas"])
def test_empty_or_irrelevant_input_gives_the_default_4(issue: str):
    got = retrieve(issue, "", CONFIG)
    assert got.tools == DEFAULT_4 == ("read_entity", "search_symbol", "search_code", "run_test")
    assert got.fallback == "default-4" and got.truncated is False


def test_ranked_by_score_then_registry_order():
    issue = "search for the symbol, then fix"
    scores = keyword_scores(issue)
    assert scores["search_symbol"] == 2 and scores["search_code"] == 1
    assert scores["edit_entity"] == 1
    got = retrieve(issue, "", CONFIG)
    assert got.tools == ("search_symbol", "search_code", "edit_entity")
    assert got.scores == scores and got.fallback is None


def test_never_more_than_five_and_truncated_says_so():
    everything = " ".join(w for name in TOOL_NAMES for w in tool_text(name).split())
    got = retrieve(everything, "", CONFIG)
    assert len(got.tools) == CAP == 5 and got.truncated is True
    assert all(score >= 1 for score in got.scores.values())
    assert retrieve("fix it", "", CONFIG).truncated is False


def test_never_reserved_names():
    for text in ("ask_user stop", "", "fix test"):
        assert not set(retrieve(text, "", CONFIG).tools) & set(RESERVED)


def test_without_top5_all_six_in_registry_order():
    config = CONFIG.without("retrieve.top5")
    for text in ("", "fix it", "search symbol"):
        got = retrieve(text, "", config)
        assert got == Candidates(tools=TOOL_NAMES, truncated=False, scores={}, fallback=None)


def test_embed_is_off_by_default_and_never_loads_a_model():
    def loader():
        raise AssertionError("the embedder must not be loaded")

    assert retrieve("the discount is wrong", "", CONFIG, loader).fallback == "default-4"
    # With the gate on, a keyword hit still wins: the embedder is only a fallback.
    assert retrieve("fix it", "", EMBED, loader).tools == ("edit_entity",)


def test_embed_fallback_with_the_real_offline_embedder():
    embedder = load_embedder()
    got = retrieve("what is 2 to the power 100", "", EMBED, embedder)
    assert got.fallback == "embed" and got.tools[0] == "execute" and len(got.tools) == 4
    assert set(got.scores) == set(TOOL_NAMES)
    located = retrieve("locate the definition of MemStore", "", EMBED, load_embedder)
    assert located.tools[0] in ("read_entity", "search_symbol", "search_code")
    assert retrieve("locate the definition of MemStore", "", EMBED, embedder) == located


def test_embed_fallback_is_deterministic_on_ties():
    class Flat:
        model_id = "flat-test"

        def embed(self, texts: list[str]) -> np.ndarray:
            return np.ones((len(texts), 3), dtype=np.float32) / np.sqrt(3)

    got = retrieve("nothing matches here", "", EMBED, Flat())
    assert got.tools == TOOL_NAMES[:4] and got.fallback == "embed"


def test_unloadable_embedder_falls_back_to_default_4_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("TOOLPOLICY_EMBED_MODEL_DIR", str(tmp_path / "no-model"))
    got = retrieve("the discount is wrong", "", EMBED, load_embedder)
    assert got.tools == DEFAULT_4
    assert got.fallback.startswith("default-4 (embedder unavailable: ")
    assert "lacks model.onnx" in got.fallback

    def broken():
        raise EmbedderUnavailable("offline")

    assert retrieve("x", "", EMBED, broken).fallback == "default-4 (embedder unavailable: offline)"
    assert (
        retrieve("x", "", EMBED).fallback == "default-4 (embedder unavailable: no embedder given)"
    )


class _Toward:
    """An embedder that puts the six tools' texts on six axes and every query on ``tool``'s."""

    def __init__(self, tool: str) -> None:
        self.tool = tool

    def embed(self, texts: list[str]) -> np.ndarray:
        if len(texts) == len(TOOL_NAMES):  # the registry's texts, in registry order
            return np.eye(len(TOOL_NAMES))
        out = np.zeros((len(texts), len(TOOL_NAMES)))
        out[:, TOOL_NAMES.index(self.tool)] = 1.0
        return out


def test_hybrid_ranks_keyword_hits_first_then_by_cosine() -> None:
    config = PolicyConfig(ranking="hybrid")
    # "pytest" hits run_test; the cosine sends every tie toward edit_entity
    got = retrieve("the pytest run fails", "", config, _Toward("edit_entity"))
    assert got.fallback == "hybrid" and len(got.tools) == 5
    hits = [t for t in got.tools if got.scores[t] >= 1]
    assert got.tools[0] == "run_test" and list(got.tools[: len(hits)]) == hits
    assert got.tools[len(hits)] == "edit_entity"  # the first tool no keyword names
    # without an embedder the spec's map decides, as if hybrid were off
    assert retrieve("the pytest run fails", "", config, None) == retrieve(
        "the pytest run fails", "", PolicyConfig(), None
    )
    with pytest.raises(ValueError, match="ranking must be one of map, hybrid"):
        PolicyConfig(ranking="bm25")
