"""One item's results row (the columns of ``decide/schema.py``, read as ``schema.SPECS`` say), off
its trajectory alone.

Everything a row says comes from the saved trajectory and its grade, except what needs reruns
(the necessary calls), whose counts the trajectory's meta keeps; so a table recomputed from
``trajectories.jsonl`` equals the one the session printed.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ..bench.gold_source import label_for
from ..decide.results_column import Source
from ..decide.schema import SPECS
from ..decide.variants import CANDIDATE_PREFIX, ItemSpec, repo_of
from ..types import Trajectory
from . import counterfactual, gate_acts, selection


def source_of(
    trajectory: Trajectory, spec: ItemSpec, gold_dir: Path | None, duration_s: float = math.nan
) -> Source:
    meta = trajectory.meta
    grade_ = meta.get("grade") or {}
    gold = label_for(trajectory.instance_id, gold_dir, meta)
    # No label: nothing attempted, so it neither helps nor hurts either arm.
    correct, attempted = selection.score(trajectory, gold.label) if gold.label else (0, 0)
    parsed, replies = selection.replies_parsed(trajectory)
    return Source(
        trajectory=trajectory,
        spec=spec,
        meta=meta,
        usage=[
            r["usage"] for t in trajectory.turns for r in (t.completion, *t.extra_selections) if r
        ],
        cf=meta.get("counterfactual") or {},
        grade=grade_,
        # An infrastructure failure of grading (an environment that cannot install, a test
        # that needs the network) measured nothing: the row is kept and shown, and its instance
        # is left out of every arm. An endpoint's model error is measured, as not resolved.
        status=_status(trajectory, grade_),
        error=_infra_error(grade_) or _model_error(trajectory),
        cost_usd=_spent(trajectory),
        replies=replies,
        replies_parsed=parsed,
        calls=len(counterfactual.executed_calls(trajectory)),
        selection_correct=correct,
        selection_attempted=attempted,
        gold=gold,
        abstained=selection.abstained(trajectory),
        duration_s=duration_s,
        acts=gate_acts.acts(trajectory) if trajectory.arm == "policy" else {},
        blocked=gate_acts.blocked(trajectory) if trajectory.arm == "policy" else {},
    )


def row_of(
    trajectory: Trajectory, spec: ItemSpec, gold_dir: Path | None, duration_s: float = math.nan
) -> dict[str, Any]:
    """The results row of one item, from its trajectory alone (wall time is not part of a
    trajectory: the runner gives it, a row rebuilt from a saved trajectory has NaN)."""
    source = source_of(trajectory, spec, gold_dir, duration_s)
    return {column.name: column.read(source) for column in SPECS}


def error_row(spec: ItemSpec, harness_meta: dict[str, Any], error: str) -> dict[str, Any]:
    """A harness fault: recorded, counted apart, never measured."""
    return {
        "instance_id": spec.instance_id,
        "item": spec.id,
        "arm": spec.arm,
        "variant": spec.variant,
        "gate": spec.gate,
        "model": harness_meta.get("model"),
        "seed": harness_meta.get("seed"),
        "trial": spec.trial or 1,
        "repo": repo_of(spec.instance_id),
        "dataset": harness_meta.get("dataset"),
        "status": "error",
        "error": error,
    }


def _status(trajectory: Trajectory, grade_: dict[str, Any]) -> str:
    if grade_.get("status") == "infra_error":
        return "infra_error"
    return "model_error" if trajectory.outcome.outcome == "model_error" else "ok"


def _spent(trajectory: Trajectory) -> float | None:
    """The run's spend: None when any call's cost is unknown, except that a run the endpoint
    ended (``model_error``) is measured at what its answered calls cost, the failed call's own
    unknown spend not in it (as its tokens are not: ``tokens_unknown`` says so)."""
    if trajectory.outcome.outcome != "model_error":
        return trajectory.cost_usd
    costs = [
        r.get("cost_usd")
        for t in trajectory.turns
        for r in (t.completion, *t.extra_selections)
        if r and not (r.get("error") and r.get("cost_usd") is None)
    ]
    return None if any(c is None for c in costs) else float(sum(c for c in costs if c is not None))


def _infra_error(grade_: dict[str, Any]) -> str | None:
    if grade_.get("status") != "infra_error":
        return None
    return f"infra error: {grade_.get('reason') or 'grading could not run'}"


def _model_error(trajectory: Trajectory) -> str | None:
    if trajectory.outcome.outcome != "model_error":
        return None
    return f"model error: {trajectory.outcome.detail.get('reason', '?')}"


def spec_of(trajectory: Trajectory) -> ItemSpec:
    variant = trajectory.variant
    prefix = "policy-no:"
    gate = variant[len(prefix) :] if variant.startswith(prefix) else None
    candidate = variant[len(CANDIDATE_PREFIX) :] if variant.startswith(CANDIDATE_PREFIX) else None
    trial = trajectory.meta.get("trial")
    return ItemSpec(trajectory.instance_id, trajectory.arm, gate, candidate, trial or None)
