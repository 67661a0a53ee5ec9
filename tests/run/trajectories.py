"""Hand-built trajectories, as the loops record them, for the measures read off them."""

from __future__ import annotations

import json
from typing import Any

from pytest_toolpolicy.types import Observation, Outcome, Rejection, ToolCall, Trajectory, Turn

USAGE = {"prompt_tokens": 100, "completion_tokens": 10, "cached_prompt_tokens": 0}


def completion(text: str) -> dict[str, Any]:
    return {"text": text, "usage": dict(USAGE), "cost_usd": 0.001, "latency_s": 0.1}


def policy_reply(tool: str, **args: Any) -> dict[str, Any]:
    return completion(json.dumps({"tool": tool, "args": args}))


def turn(index: int, reply: dict[str, Any], **fields: Any) -> Turn:
    return Turn(index=index, completion=reply, **fields)


def trajectory(
    instance_id: str,
    arm: str,
    turns: list[Turn],
    outcome: Outcome,
    *,
    patch: str = "",
    resolved: bool = False,
    underspecified: bool = False,
    variant: str | None = None,
    **meta: Any,
) -> Trajectory:
    grade = None if underspecified else {"resolved": resolved, "status": "ok"}
    return Trajectory(
        instance_id=instance_id,
        arm=arm,
        variant=variant or arm,
        model="scripted",
        turns=tuple(turns),
        outcome=outcome,
        patch=patch,
        meta={
            "grade": grade,
            "underspecified": underspecified,
            "seed": 0,
            "dataset": "hand-built",
            **meta,
        },
    )


def always_asks(instance_id: str, *, underspecified: bool) -> Trajectory:
    """The degenerate policy-arm model: ``ask_user`` at once, whatever the issue."""
    ask = policy_reply("ask_user", question="Can you give more details?")
    return trajectory(
        instance_id,
        "policy",
        [turn(0, ask)],
        Outcome("ask_user", {"question": "Can you give more details?"}),
        underspecified=underspecified,
    )


def submits_empty(instance_id: str, *, underspecified: bool) -> Trajectory:
    """The degenerate baseline: ``submit`` at once, with the code unchanged."""
    submit = completion(json.dumps({"tool": "submit", "args": {"message": "done"}}))
    return trajectory(
        instance_id,
        "current",
        [turn(0, submit)],
        Outcome("stop", {"reason": "done"}),
        underspecified=underspecified,
    )


def busy_policy_run() -> Trajectory:
    """A policy run in which most gates act once: a retrieval narrowed by the map and one by
    the embedding fallback, a registry and an evidence rejection, a deferred call, a symbol, a
    lint and a test trigger, an unverified run_test, and a stop."""
    read = ToolCall("read_entity", {"selector": "m.f"})
    unverified = Observation(
        "run_test",
        "t.py",
        {"passed": True, "exit_code": 1},
        source="model",
        trust="unverified",
        caveat="exit_code: passed=true but exit_code=1; schema: envelope ok is 1, not a bool",
    )
    turns = [
        turn(
            0,
            policy_reply("bash", cmd="ls"),
            rejections=(Rejection("bash", "unknown tool: bash"),),
            extra_selections=(policy_reply("read_entity", selector="m.f"),),
            request=read,
            executed=(read,),
            observations=(
                Observation("symbol", "m.f", [], source="trigger"),
                Observation("read_entity", "m.f", "def f():"),
            ),
            retrieval=(
                {"tools": ["read_entity", "search_symbol"], "fallback": None},
                {
                    "tools": ["read_entity", "edit_entity", "run_test", "execute"],
                    "fallback": "embed",
                },
            ),  # fmt: skip
        ),
        turn(
            1,
            policy_reply("edit_entity", selector="m.g", search="a", replace="b"),
            rejections=(Rejection("edit_entity", "precondition failed: no evidence for m.g"),),
            deferred=(ToolCall("run_test", {"target": "t.py"}),),
            observations=(
                Observation("lint", "m.f", "clean", source="trigger"),
                Observation("test", "t.py", {"passed": False}, source="trigger"),
                unverified,
            ),
            retrieval=({"tools": list(ALL_SIX), "fallback": None},),
        ),
    ]
    return trajectory("repo__m-1", "policy", turns, Outcome("stop", {"reason": "done"}))


ALL_SIX = ("read_entity", "search_symbol", "search_code", "edit_entity", "run_test", "execute")
