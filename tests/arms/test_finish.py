"""How every arm finishes its trajectory: the workspace's patch, its snapshot's word first, the
arm's meta, the budget's totals last; the outcomes the harness side of a loop decides."""

from __future__ import annotations

from pathlib import Path

from pytest_toolpolicy.arms.finish import failed, finish, spent, turn_cap
from pytest_toolpolicy.models.base import Completion, ModelError, Usage
from pytest_toolpolicy.models.budget import Budget
from pytest_toolpolicy.models.scripted import ScriptedModel
from pytest_toolpolicy.primitives.workspace import Workspace
from pytest_toolpolicy.types import Outcome, Task, Turn

TASK = Task("repo__x-1", "Fix it.")


def test_the_trajectory_holds_the_patch_and_the_meta_in_order(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("old\n")
    workspace = Workspace.create(tmp_path)
    (tmp_path / "a.txt").write_text("new\n")
    budget = Budget(max_usd=1.0).charge(Completion("", Usage(10, 5), 0.25, 0.0))
    trajectory = finish(
        TASK, arm="current", variant="current-x", model=ScriptedModel([]), workspace=workspace,
        turns=[Turn(0)], outcome=turn_cap(3), meta={"test_target": None}, budget=budget,
    )  # fmt: skip
    assert (trajectory.instance_id, trajectory.arm, trajectory.variant) == (
        "repo__x-1", "current", "current-x"
    )  # fmt: skip
    assert trajectory.model == "scripted" and trajectory.turns == (Turn(0),)
    assert "-old\n+new" in trajectory.patch
    assert list(trajectory.meta) == ["test_target", "budget"]
    assert trajectory.meta["budget"]["known_usd"] == 0.25
    assert trajectory.outcome == Outcome("budget_exhausted", {"reason": "turn cap 3 reached"})


def test_without_a_workspace_or_a_budget_there_is_no_patch_and_no_totals() -> None:
    trajectory = finish(
        TASK, arm="policy", variant="policy", model=ScriptedModel([]), workspace=None,
        turns=(), outcome=Outcome("stop"), meta={"gates": []},
    )  # fmt: skip
    assert (trajectory.patch, trajectory.meta) == ("", {"gates": []})


def test_the_harness_side_outcomes() -> None:
    assert failed(ModelError("502 from the endpoint")).outcome == "model_error"
    refused = failed(ModelError("context too long", blame="request"))
    assert refused == Outcome(
        "budget_exhausted", {"reason": "the arm's request was refused: context too long"}
    )
    assert spent(Budget(max_usd=1.0)) is None
    over = Budget(max_usd=0.1).charge(Completion("", Usage(1, 1), 0.2, 0.0))
    assert spent(over) == Outcome("budget_exhausted", {"reason": over.reason})
