"""``retrieve.embed`` is measurable in the A/B: the loop the A/B builds is handed the offline
embedder, so with the gate on a query the keyword map finds nothing in is ranked by embedding,
and the run records it; with the gate off the same turn shows the default 4."""

from __future__ import annotations

import json

from pytest_toolpolicy.models.scripted import ScriptedModel
from pytest_toolpolicy.policy.config import PolicyConfig
from pytest_toolpolicy.policy.retrieve import DEFAULT_4, keyword_scores
from pytest_toolpolicy.primitives import Toolbox
from pytest_toolpolicy.run.arms import build_loop
from pytest_toolpolicy.run.gate_acts import acts
from pytest_toolpolicy.types import Task

# No keyword of the map occurs in it (checked below), so retrieval falls back.
ISSUE = "The discount is applied twice when a coupon is used."
STOP = json.dumps({"tool": "stop", "args": {"reason": "nothing to do"}})


def _first_turn(box: Toolbox, config: PolicyConfig):
    loop = build_loop("policy", box, ScriptedModel([STOP]), config)  # the A/B's own loop
    trajectory = loop.run(Task("repo__shop-1", ISSUE))
    turn = trajectory.turns[0]
    tools = turn.prompt[1]["content"].split("## Current state")[0]
    return turn, tools, trajectory


def test_the_map_finds_nothing_in_the_issue() -> None:
    assert not any(keyword_scores(ISSUE).values())


def test_embed_on_ranks_by_embedding_and_off_shows_the_default_four(box: Toolbox) -> None:
    on, shown_on, run_on = _first_turn(box, PolicyConfig().with_gate("retrieve.embed"))
    off, shown_off, run_off = _first_turn(box, PolicyConfig())
    assert off.retrieval == ({"tools": list(DEFAULT_4), "fallback": "default-4"},)
    (retrieved,) = on.retrieval
    assert retrieved["fallback"] == "embed"  # not "embedder unavailable: no embedder given"
    assert retrieved["tools"] != list(DEFAULT_4)
    # The embedding brings in what the observe-only default leaves out.
    assert {"edit_entity", "execute"} & set(retrieved["tools"])
    assert "edit_entity —" not in shown_off and "execute —" not in shown_off
    assert any(f"{tool} —" in shown_on for tool in {"edit_entity", "execute"} - set(DEFAULT_4))
    assert acts(run_on)["retrieve.embed"] == 1 and acts(run_off)["retrieve.embed"] == 0
