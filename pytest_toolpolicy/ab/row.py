"""One item's results row (the columns of ``schema.py``), read off its trajectory alone.

Everything a row says comes from the saved trajectory and its grade, except what needs reruns
(the necessary calls), whose counts the trajectory's meta keeps; so a table recomputed from
``trajectories.jsonl`` equals the one the session printed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..bench.gold import GoldError, load_gold
from ..bench.instance import Instance
from ..types import Trajectory
from . import counterfactual, selection


@dataclass(frozen=True)
class ItemSpec:
    instance_id: str
    arm: str  # policy | current
    gate: str | None = None  # the gate an ablation variant turns off

    @property
    def variant(self) -> str:
        if self.arm == "current":
            return "current"
        return f"policy-no:{self.gate}" if self.gate else "policy"

    @property
    def id(self) -> str:
        return f"{self.instance_id}-{self.variant}"


def row_of(
    trajectory: Trajectory, instance: Instance | None, spec: ItemSpec, gold_dir: Path | None
) -> dict[str, Any]:
    """The results row of one item, from its trajectory alone (``instance`` is optional)."""
    meta = trajectory.meta
    usage = [r["usage"] for t in trajectory.turns for r in (t.completion, *t.extra_selections) if r]
    cf = meta.get("counterfactual") or {}
    grade_ = meta.get("grade") or {}
    correct, attempted = _selection(trajectory, gold_dir)
    parsed, replies = selection.replies_parsed(trajectory)
    cost = trajectory.cost_usd
    return {
        "instance_id": trajectory.instance_id,
        "arm": spec.arm,
        "variant": spec.variant,
        "gate": spec.gate,
        "model": trajectory.model,
        "seed": meta.get("seed"),
        "dataset": meta.get("dataset"),
        "tests_visible": bool(meta.get("tests_visible")),
        "sandbox": meta.get("sandbox"),
        # A model error or an infrastructure failure of grading (an environment that cannot
        # install, a test that needs the network) measured nothing: the row is kept and shown,
        # and its instance is left out of both arms.
        "status": _status(trajectory, grade_),
        "error": _model_error(trajectory) or _infra_error(grade_),
        "resolved": bool(grade_.get("resolved")),
        "outcome": trajectory.outcome.outcome,
        "underspecified": bool(meta.get("underspecified")),
        "cost_usd": float("nan") if cost is None else float(cost),
        "tokens": trajectory.tokens,
        "prompt_tokens": sum(u["prompt_tokens"] for u in usage),
        "completion_tokens": sum(u["completion_tokens"] for u in usage),
        "cached_tokens": sum(u.get("cached_prompt_tokens", 0) for u in usage),
        "tokens_estimated": any(u.get("estimated") for u in usage),
        "tokens_unknown": any(u.get("missing") for u in usage),
        "turns": len(trajectory.turns),
        "replies": replies,
        "replies_parsed": parsed,
        "calls": len(counterfactual.executed_calls(trajectory)),
        "necessary_calls": int(cf.get("necessary", 0)),
        "selection_correct": correct,
        "selection_attempted": attempted,
        "abstained": selection.abstained(trajectory),
        "cf_reruns": int(cf.get("reruns", 0)),
        "cf_model_calls": int(cf.get("model_calls", 0)),
        "cf_model_calls_cached": int(cf.get("model_served", 0)),
        "cf_tool_executions": int(cf.get("tool_executions", 0)),
        "cf_tool_memo_hits": int(cf.get("tool_calls", 0)) - int(cf.get("tool_executions", 0)),
        "cf_cost_usd": float(cf.get("cost_usd", 0.0)),
        "cf_tokens": int(cf.get("tokens", 0)),
        "duration_s": float("nan"),
    }


def error_row(spec: ItemSpec, harness_meta: dict[str, Any], error: str) -> dict[str, Any]:
    """A harness fault: recorded, counted apart, never measured."""
    return {
        "instance_id": spec.instance_id,
        "arm": spec.arm,
        "variant": spec.variant,
        "gate": spec.gate,
        "model": harness_meta.get("model"),
        "seed": harness_meta.get("seed"),
        "dataset": harness_meta.get("dataset"),
        "status": "error",
        "error": error,
    }


def _status(trajectory: Trajectory, grade_: dict[str, Any]) -> str:
    if trajectory.outcome.outcome == "model_error":
        return "error"
    return "infra_error" if grade_.get("status") == "infra_error" else "ok"


def _infra_error(grade_: dict[str, Any]) -> str | None:
    if grade_.get("status") != "infra_error":
        return None
    return f"infra error: {grade_.get('reason') or 'grading could not run'}"


def _model_error(trajectory: Trajectory) -> str | None:
    if trajectory.outcome.outcome != "model_error":
        return None
    return f"model error: {trajectory.outcome.detail.get('reason', '?')}"


def spec_of(trajectory: Trajectory) -> ItemSpec:
    prefix = "policy-no:"
    gate = trajectory.variant[len(prefix) :] if trajectory.variant.startswith(prefix) else None
    return ItemSpec(trajectory.instance_id, trajectory.arm, gate)


def _selection(trajectory: Trajectory, gold_dir: Path | None) -> tuple[int, int]:
    try:
        gold = load_gold(trajectory.instance_id, gold_dir) if gold_dir else None
    except GoldError:
        gold = None
    if gold is None:
        return 0, 0  # no label: not attempted, so it neither helps nor hurts either arm
    return selection.score(trajectory, gold)
