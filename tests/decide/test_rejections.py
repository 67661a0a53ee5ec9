"""Rejections counted by the rule they broke, from the trajectory to the decision's summary."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from pytest_toolpolicy.decide.rejections import rejections_by_rule, reselections, rule_of, shown
from pytest_toolpolicy.decide.summary import summary_lines
from pytest_toolpolicy.decide.table import decision_table
from pytest_toolpolicy.types import Outcome, Rejection, Trajectory, Turn

from .results_factory import item


@pytest.mark.parametrize(
    ("reason", "rule"),
    [
        ("unknown tool: bash", "unknown tool"),
        ("unknown arg: target", "unknown arg"),
        ("missing required arg: selector", "missing required arg"),
        ("invalid arg: window (expected int 1..100, got 0)", "invalid arg: window"),
        ("precondition failed: unknown selector sys.argv", "unknown selector"),
        (
            "precondition failed: no evidence for selector repo.memstore.MemStore.remember",
            "no evidence for selector",
        ),
        ("precondition failed: empty query", "empty query"),
        ("something else entirely", "something else entirely"),
    ],
)
def test_a_reason_loses_its_offending_value_and_keeps_its_rule(reason: str, rule: str) -> None:
    assert rule_of(reason) == rule


def _trajectory() -> Trajectory:
    rejected = (
        Rejection("edit_entity", "precondition failed: no evidence for selector sys.argv"),
        Rejection("edit_entity", "precondition failed: no evidence for selector a.b"),
    )
    turns = (
        Turn(index=0, rejections=rejected, extra_selections=({"text": "{}"},)),
        Turn(index=1, rejections=(Rejection("run_test", "unknown arg: where"),)),
        Turn(index=2),
    )
    return Trajectory("repo__pkg-1", "policy", "policy", "sim", turns, Outcome("stop"))


def test_a_runs_rejections_are_counted_by_rule_and_its_reselections_by_turn() -> None:
    trajectory = _trajectory()
    assert rejections_by_rule(trajectory) == {"no evidence for selector": 2, "unknown arg": 1}
    assert reselections(trajectory) == 1


def test_the_summary_says_what_validation_refused_per_variant() -> None:
    rows = [
        item(instance_id=f"repo__pkg-{n}", variant=variant, arm=variant.split("-")[0], **extra)
        for n in (1, 2)
        for variant, extra in (
            ("current", {}),
            ("policy", {"rejections": json.dumps({"no evidence for selector": 3,
                                                  "unknown arg": 1}),
                        "reselections": 2}),
        )
    ]  # fmt: skip
    table = decision_table(pd.DataFrame(rows))
    assert json.loads(table.loc["policy", "rejections"]) == {
        "no evidence for selector": 6,
        "unknown arg": 2,
    }
    assert table.loc["policy", "reselections"] == 4
    lines = [line for line in summary_lines(table) if line.startswith("calls rejected")]
    assert lines == [
        "calls rejected by validation, by rule: "
        "policy no evidence for selector \u00d76, unknown arg \u00d72 (4 re-selections)"
    ]


def test_a_table_without_rejections_says_nothing_of_them() -> None:
    assert shown("{}") == "" and shown(None) == "" and shown("not json") == ""
