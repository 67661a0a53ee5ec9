"""Row 13 measured: NDCG@5 and recall@5 of each retriever against the gold labels."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from pytest_toolpolicy.policy.registry import TOOL_NAMES
from pytest_toolpolicy.rounds.retrieval import (
    Query,
    bootstrap_ci,
    evaluate,
    first_points,
    ndcg_at,
    rank_hybrid,
    rank_keyword,
    recall_at,
    rows_of,
)


def test_ndcg_and_recall_by_hand() -> None:
    ranked = ["read_entity", "search_symbol", "search_code", "run_test", "execute", "edit_entity"]
    assert ndcg_at(ranked, frozenset({"read_entity"})) == 1.0
    # one relevant tool at rank 2: 1/log2(3) over the ideal 1
    assert ndcg_at(ranked, frozenset({"search_symbol"})) == pytest.approx(1 / math.log2(3))
    # two relevant, at ranks 1 and 3, against the ideal ranks 1 and 2
    both = frozenset({"read_entity", "search_code"})
    assert ndcg_at(ranked, both) == pytest.approx((1 + 1 / 2) / (1 + 1 / math.log2(3)))
    assert ndcg_at(ranked, frozenset({"edit_entity"})) == 0.0  # sixth: past the cut
    assert recall_at(ranked, both) == 1.0 and recall_at(ranked, frozenset({"edit_entity"})) == 0.0


def test_the_rankings_keep_every_tool_and_the_maps_order() -> None:
    text = "the test fails: run pytest on tests/test_cart.py"
    keyword = rank_keyword(text)
    assert sorted(keyword) == sorted(TOOL_NAMES) and keyword[0] == "run_test"
    # with no keyword hit, cosine decides every place
    cosine = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    assert rank_hybrid("zzz", cosine) == list(reversed(TOOL_NAMES))


class Fake:
    """An embedder whose vectors make ``edit_entity`` closest to every query."""

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), len(TOOL_NAMES)))
        for row, text in enumerate(texts):
            hit = [i for i, n in enumerate(TOOL_NAMES) if n.replace("_", " ") in text]
            out[row, hit[0] if hit else TOOL_NAMES.index("edit_entity")] = 1.0
        return out


def test_each_retriever_scored_with_an_interval() -> None:
    queries = [Query("a", 0, "zzz", frozenset({"edit_entity"})),
               Query("b", 0, "zzz", frozenset({"read_entity"}))]  # fmt: skip
    scored = {s.retriever: s for s in evaluate(queries, Fake())}
    assert set(scored) == {"keyword", "embed", "hybrid"}
    assert scored["embed"].ndcg == pytest.approx((1.0 + 1 / math.log2(3)) / 2)
    low, high = scored["embed"].ndcg_ci
    assert low <= scored["embed"].ndcg <= high
    assert list(evaluate(queries, None))[0].retriever == "keyword"  # no embedder: the map only


def test_bootstrap_interval_is_seeded_and_holds_the_mean() -> None:
    values = [0.0, 1.0, 1.0, 0.5, 0.25]
    assert bootstrap_ci(values, seed=3) == bootstrap_ci(values, seed=3)
    low, high = bootstrap_ci(values)
    assert low < float(np.mean(values)) < high
    assert bootstrap_ci([1.0, 1.0]) == (1.0, 1.0)


def test_first_points_of_the_bundled_benchmark_and_of_rows(tmp_path: Path) -> None:
    rows, malformed = rows_of("bundled")
    queries, skipped = first_points(rows)
    assert malformed == "" and len(rows) == 25 and len(queries) + len(skipped) == 25
    assert all("first move is ask_user" in why for why in skipped)  # under-specified ones
    patch = "--- a/pkg/mod.py\n+++ b/pkg/mod.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n"
    row = {"instance_id": "r-1", "problem_statement": "pkg.mod.f returns 1", "patch": patch}
    lines = [json.dumps(row), "not json", '{"no": "id"}']
    (tmp_path / "rows.jsonl").write_text("\n".join(lines) + "\n")
    rows, malformed = rows_of(str(tmp_path / "rows.jsonl"))
    assert [r["instance_id"] for r in rows] == ["r-1"]
    assert malformed.endswith("rows.jsonl:2: not JSON: Expecting value (column 1) (2 malformed"
                              " lines skipped: 2, 3)")  # fmt: skip
    (query,), _ = first_points(rows)
    assert query.relevant & {"search_symbol", "read_entity"}  # derived from the patch


def test_later_points_follow_the_gold_path_and_rebuild_the_query() -> None:
    from pytest_toolpolicy.rounds.retrieval import later_points
    from pytest_toolpolicy.types import Observation, Outcome, Trajectory, Turn

    def reply(tool: str) -> dict:
        return {"text": json.dumps({"tool": tool, "args": {"query": "remember"}}), "extra": {}}

    found = Observation("search_symbol", "remember", "memstore.MemStore.remember (1 match)")
    symbol = Observation("symbol", "memstore.MemStore.remember", "found", source="trigger")
    on_path = [Turn(0, completion=reply("search_symbol"), observations=(symbol, found)),
               Turn(1, completion=reply("read_entity")),
               Turn(2, completion=reply("edit_entity"))]  # fmt: skip
    statement = "memstore.MemStore.remember evicts an entry that is only being updated"
    run = Trajectory("bundled__memstore-1", "policy", "policy", "m", tuple(on_path),
                     Outcome("stop"), "", {})  # fmt: skip
    first, second = later_points([run], {"bundled__memstore-1": statement})
    assert (first.point, second.point) == (1, 2)
    assert first.text == f"{statement} {found.line()}"  # the latest entry when it selected
    assert first.relevant == {"read_entity", "edit_entity"}  # the hand label's second set
    off = Trajectory("bundled__memstore-1", "policy", "policy", "m",
                     (Turn(0, completion=reply("run_test")), *on_path[1:]), Outcome("stop"), "",
                     {})  # fmt: skip
    assert later_points([off], {"bundled__memstore-1": statement}) == []  # left at once
    assert later_points([run], {}) == []  # no issue text: nothing rebuilt
