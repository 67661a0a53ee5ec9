"""Each row says which gold label its selections were scored on: hand, derived or none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_toolpolicy.bench.gold_source import DERIVED_KEY, record
from pytest_toolpolicy.decide.results import results_frame
from pytest_toolpolicy.decide.schema import COLUMNS
from pytest_toolpolicy.decide.table import decision_table
from pytest_toolpolicy.run.row import row_of, spec_of
from pytest_toolpolicy.types import Outcome, Trajectory, Turn

from .test_selection import reply

PATCH = """\
diff --git a/pkg/mod.py b/pkg/mod.py
--- a/pkg/mod.py
+++ b/pkg/mod.py
@@ -1,3 +1,3 @@
 def area(w, h):
-    return w + h
+    return w * h
"""


def run(arm: str, meta: dict[str, Any], instance_id: str = "own__pkg-1") -> Trajectory:
    turns = [
        Turn(0, completion=reply("read_entity", selector="pkg.mod.area")),
        Turn(1, completion=reply("edit_entity", selector="pkg.mod.area", search="+", replace="*")),
        Turn(2, completion=reply("run_test", target="tests")),
        Turn(3, completion=reply("stop", reason="done")),
    ]
    return Trajectory(instance_id, arm, arm, "scripted", tuple(turns), Outcome("stop"), "", meta)


def test_a_recorded_derived_label_scores_the_row_and_says_so() -> None:
    derived = record("own__pkg-1", "`pkg.mod.area` adds instead of multiplying", PATCH, False)
    row = row_of(run("policy", {DERIVED_KEY: derived}), spec_of(run("policy", {})), None)
    assert row["gold_source"] == "derived"
    assert row["gold_detail"].startswith("derived: names pkg.mod.area; the one entity edited")
    assert (row["selection_correct"], row["selection_attempted"]) == (3, 3)
    assert set(row) == set(COLUMNS)


def test_a_hand_written_label_wins_over_a_derived_one(tmp_path: Path) -> None:
    (tmp_path / "own__pkg-1").mkdir()
    hand = {"instance_id": "own__pkg-1", "decisions": [["search_code"]], "outcome": "stop"}
    (tmp_path / "own__pkg-1" / "gold.json").write_text(json.dumps(hand))
    derived = record("own__pkg-1", "`pkg.mod.area` is wrong", PATCH, False)
    row = row_of(run("policy", {DERIVED_KEY: derived}), spec_of(run("policy", {})), tmp_path)
    assert (row["gold_source"], row["gold_detail"]) == ("hand", None)
    assert (row["selection_correct"], row["selection_attempted"]) == (0, 1)


def test_a_broken_hand_written_label_is_named_not_replaced(tmp_path: Path) -> None:
    (tmp_path / "own__pkg-1").mkdir()
    (tmp_path / "own__pkg-1" / "gold.json").write_text("{not json")
    derived = record("own__pkg-1", "`pkg.mod.area` is wrong", PATCH, False)
    row = row_of(run("policy", {DERIVED_KEY: derived}), spec_of(run("policy", {})), tmp_path)
    assert row["gold_source"] == "none"
    assert "hand-written label unusable" in row["gold_detail"] and "gold.json" in row["gold_detail"]
    assert row["selection_attempted"] == 0


def test_without_a_recorded_label_an_under_specified_instance_still_derives_ask_user() -> None:
    row = row_of(run("policy", {"underspecified": True}), spec_of(run("policy", {})), None)
    assert row["gold_source"] == "derived"
    assert (row["selection_correct"], row["selection_attempted"]) == (0, 3)


def test_no_label_anywhere_is_none_with_the_reason() -> None:
    row = row_of(run("policy", {}), spec_of(run("policy", {})), None)
    assert row["gold_source"] == "none" and "no hand-written label" in row["gold_detail"]
    problem = record("own__pkg-1", "docs are wrong", "--- a/README\n+++ b/README\n", False)
    row = row_of(run("policy", {DERIVED_KEY: problem}), spec_of(run("policy", {})), None)
    assert row["gold_source"] == "none"
    assert row["gold_detail"] == (
        "no label could be derived: the gold patch changes no Python source file (tests excluded)"
    )


def test_a_malformed_recorded_label_is_a_specific_error() -> None:
    bad = {"instance_id": "own__pkg-1", "decisions": [["bash"]], "outcome": "stop"}
    row = row_of(run("policy", {DERIVED_KEY: bad}), spec_of(run("policy", {})), None)
    assert row["gold_source"] == "none"
    assert row["gold_detail"].startswith("trajectory meta gold_derived: decisions must be")


def test_rows_rebuilt_from_trajectories_give_a_judged_decision_on_derived_labels() -> None:
    """Both arms scored on the derived label the runs recorded: selection accuracy is judged."""
    derived = record("own__pkg-1", "`pkg.mod.area` adds instead of multiplying", PATCH, False)
    rows = [row_of(t, spec_of(t), None) for t in (run(a, {DERIVED_KEY: derived}) for a in
                                                  ("current", "policy"))]  # fmt: skip
    table = decision_table(results_frame(rows))
    assert table.loc["policy", "labelled_derived"] == 1
    assert table.loc["policy", "judged"] == 5
