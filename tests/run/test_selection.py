"""Tool-selection accuracy and abstention read off saved trajectories of both arms."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_toolpolicy.bench.gold import GoldLabel
from pytest_toolpolicy.run.selection import abstained, moves, score
from pytest_toolpolicy.types import Observation, Outcome, Trajectory, Turn


def reply(tool: str, **args: Any) -> dict[str, Any]:
    text = json.dumps({"tool": tool, "args": args})
    return {"text": text, "usage": {"prompt_tokens": 1, "completion_tokens": 1}}


def prose(text: str) -> dict[str, Any]:
    return {"text": text, "usage": {"prompt_tokens": 1, "completion_tokens": 1}}


def trajectory(arm: str, turns: list[Turn], outcome: str = "stop", patch: str = "") -> Trajectory:
    return Trajectory("inst", arm, "full", "scripted", tuple(turns), Outcome(outcome), patch)


def gold(*decisions: set[str]) -> GoldLabel:
    return GoldLabel("inst", tuple(frozenset(d) for d in decisions), "stop")


def edited(ok: bool, kind: str = "edit_file") -> Observation:
    return Observation(kind, "pkg/mod.py", "ok" if ok else "error", data={"ok": ok})


POLICY = trajectory(
    "policy",
    [
        Turn(0, completion=reply("read_entity", selector="pkg.mod.f")),
        Turn(
            1,
            completion=prose("Let me think about this first."),
            extra_selections=(reply("search_symbol", query="f"),),
        ),
        Turn(2, completion=None),  # a turn without a model selection is no decision point
        Turn(3, completion=reply("edit_entity", selector="pkg.mod.f", search="a", replace="b")),
        Turn(4, completion=reply("stop", reason="done")),
    ],
)


def test_policy_moves_count_re_selections_and_malformed_replies_as_decision_points() -> None:
    assert moves(POLICY) == [
        frozenset({"read_entity"}),
        frozenset(),
        frozenset({"search_symbol"}),
        frozenset({"edit_entity"}),
        frozenset({"stop"}),
    ]


def test_ask_user_is_a_move_of_its_own() -> None:
    run = trajectory("policy", [Turn(0, completion=reply("ask_user", question="Which file?"))])
    assert moves(run) == [frozenset({"ask_user"})]


def test_score_counts_only_the_first_three_decision_points() -> None:
    label = gold({"read_entity"}, {"search_symbol", "read_entity"}, {"search_symbol"})
    # The malformed reply at point 2 is attempted and wrong; the edit at point 4 is not scored.
    assert score(POLICY, label) == (2, 3)


def test_score_stops_at_the_gold_label_or_the_run_whichever_is_shorter() -> None:
    assert score(POLICY, gold({"read_entity"})) == (1, 1)
    short = trajectory("policy", [Turn(0, completion=reply("run_test", target="tests"))])
    assert score(short, gold({"run_test"}, {"stop"}, {"stop"})) == (1, 1)
    assert score(short, gold({"read_entity"}, {"stop"})) == (0, 1)


def test_a_malformed_first_reply_is_attempted_and_wrong() -> None:
    run = trajectory("policy", [Turn(0, completion=prose('{"tool": "read_entity"'))])
    assert moves(run) == [frozenset()]
    assert score(run, gold({"read_entity", "search_symbol"})) == (0, 1)


def test_baseline_moves_map_calls_and_read_submit_by_whether_code_changed() -> None:
    run = trajectory(
        "current",
        [
            Turn(0, completion=reply("submit")),
            Turn(1, completion=reply("bash", command="grep -rn f pkg")),
            Turn(2, completion=reply("read_file", path="pkg/mod.py")),
            Turn(
                3, completion=reply("edit_file", path="pkg/mod.py"), observations=(edited(False),)
            ),
            Turn(4, completion=reply("submit")),  # the failed edit changed nothing
            Turn(5, completion=reply("bash", command="pytest -q"), observations=(edited(True),)),
            Turn(6, completion=prose("not json")),
            Turn(7, completion=reply("submit")),
        ],
    )
    assert moves(run) == [
        frozenset({"ask_user"}),
        frozenset({"search_symbol", "search_code"}),
        frozenset({"read_entity"}),
        frozenset({"edit_entity"}),
        frozenset({"ask_user"}),
        frozenset({"run_test"}),
        frozenset(),
        frozenset({"stop"}),
    ]
    assert score(run, gold({"read_entity"}, {"search_code"}, {"read_entity"})) == (2, 3)


def test_baseline_move_is_the_first_call_of_a_reply() -> None:
    text = json.dumps([{"tool": "read_file", "args": {}}, {"tool": "submit", "args": {}}])
    run = trajectory("current", [Turn(0, completion=prose(text))])
    assert moves(run) == [frozenset({"read_entity"})]


@pytest.mark.parametrize(
    ("arm", "outcome", "patch", "expected"),
    [
        ("policy", "ask_user", "", True),
        ("policy", "ask_user", "diff --git a/x b/x\n", True),
        ("policy", "stop", "", True),
        ("policy", "stop", "  \n", True),
        ("policy", "stop", "diff --git a/x b/x\n", False),
        ("policy", "budget_exhausted", "", False),
        ("policy", "model_error", "", False),
        ("current", "stop", "", True),  # the baseline's submit with nothing changed
        ("current", "stop", "diff --git a/x b/x\n", False),
    ],
)
def test_abstained(arm: str, outcome: str, patch: str, expected: bool) -> None:
    assert abstained(trajectory(arm, [], outcome, patch)) is expected
