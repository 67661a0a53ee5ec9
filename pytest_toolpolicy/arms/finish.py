"""How every arm ends its run and finishes its trajectory, in one place: the outcomes a loop's
harness side decides (a failed model call, a spent budget, the turn cap) and the trajectory
itself (the workspace's final patch, or why there is none, before the arm's own meta; the model's
name; the budget's totals where the arm keeps one).

The outcome an arm's own model decides (``ask_user``, ``stop``) is the arm's; so is its meta.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..models.base import Model, ModelError
from ..models.budget import Budget
from ..primitives.workspace import Workspace, final_patch
from ..types import Outcome, Task, Trajectory, Turn


def finish(
    task: Task,
    *,
    arm: str,
    variant: str,
    model: Model,
    workspace: Workspace | None,
    turns: Iterable[Turn],
    outcome: Outcome,
    meta: Mapping[str, Any],
    budget: Budget | None = None,
) -> Trajectory:
    """The trajectory of a run that ended with ``outcome``; what the workspace holds now is its
    patch (a workspace the host cannot snapshot any more records ``snapshot_error`` instead)."""
    patch, snapshot = final_patch(workspace)
    spent = {"budget": budget.record()} if budget is not None else {}
    return Trajectory(
        instance_id=task.instance_id,
        arm=arm,
        variant=variant,
        model=getattr(model, "name", "?"),
        turns=tuple(turns),
        outcome=outcome,
        patch=patch,
        meta={**snapshot, **meta, **spent},
    )


def failed(exc: ModelError) -> Outcome:
    """The endpoint's failure is a ``model_error``; a request of the arm's own that the
    endpoint refused (a prompt past the context) ends the run as the arm's failure, measured."""
    if exc.blame == "request":
        return Outcome("budget_exhausted", {"reason": f"the arm's request was refused: {exc}"})
    return Outcome("model_error", {"reason": str(exc)})


def spent(budget: Budget) -> Outcome | None:
    """``budget_exhausted`` once a cap is reached, else None."""
    if budget.exhausted:
        return Outcome("budget_exhausted", {"reason": budget.reason})
    return None


def turn_cap(max_turns: int) -> Outcome:
    return Outcome("budget_exhausted", {"reason": f"turn cap {max_turns} reached"})
