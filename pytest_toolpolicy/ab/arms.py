"""Run one instance in one arm: a fresh workspace at the base commit, the loop, then grading.

Both arms get the same model, the same workspace state and the same budgets; grading reads
only the captured test outcomes of the final workspace, never anything the model said.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from ..bench.envs import environment_for
from ..bench.grade import GradeResult, apply_patch, grade
from ..bench.instance import Instance
from ..bench.workspaces import materialize
from ..current.loop import CurrentLoop
from ..models.base import Model
from ..policy.config import PolicyConfig
from ..policy.loop import PolicyLoop, Task
from ..primitives.sandbox import Sandbox
from ..primitives.toolbox import Toolbox
from ..types import Trajectory

ARMS = ("policy", "current")


@dataclass(frozen=True)
class ItemResult:
    trajectory: Trajectory  # meta carries the grade
    grade: GradeResult | None  # None for an under-specified instance (not resolvable)

    @property
    def resolved(self) -> bool:
        return bool(self.grade and self.grade.resolved)


def run_instance(
    instance: Instance,
    arm: str,
    model: Model,
    *,
    workdir: Path,
    config: PolicyConfig | None = None,
    variant: str | None = None,
    repos: Path | None = None,
    sandbox: Sandbox | None = None,
    tests_visible: bool = True,
) -> ItemResult:
    """With ``tests_visible`` the instance's ``test_patch`` is part of what the agent starts from
    (spec §3.1's post-patch trigger runs the FAIL_TO_PASS tests, so they must exist); the agent's
    patch never includes it, and grading resets and re-applies it as SWE-bench does."""
    if arm not in ARMS:
        raise ValueError(f"arm must be one of {', '.join(ARMS)}, got {arm!r}")
    config = config or PolicyConfig()
    sandbox = sandbox or Sandbox.from_env()
    workspace = materialize(instance, workdir, repos=repos)
    if tests_visible and instance.test_patch.strip():
        error = apply_patch(workspace.root, instance.test_patch)
        if error:
            raise ValueError(f"instance {instance.instance_id}: test_patch does not apply: {error}")
        workspace.advance_base("toolpolicy: FAIL_TO_PASS tests visible to the agent")
    env = None if instance.path is not None else environment_for(instance, repos=repos)
    box = Toolbox(
        workspace.root,
        sandbox=sandbox,
        python=env.python if env else None,
        workspace=workspace,
    )
    task = Task(instance.instance_id, instance.problem_statement, instance.test_target)
    if arm == "policy":
        trajectory = PolicyLoop(box, model, config, variant=variant or "policy").run(task)
    else:
        loop = CurrentLoop(box, model, max_turns=config.max_turns, max_cost_usd=config.max_cost_usd)
        trajectory = loop.run(task)
    graded = (
        None if instance.underspecified else grade(workspace, instance, sandbox=sandbox, env=env)
    )
    meta = {
        **trajectory.meta,
        "underspecified": instance.underspecified,
        "sandbox": sandbox.mode,
        "tests_visible": tests_visible,
        "grade": dataclasses.asdict(graded) if graded else None,
    }
    return ItemResult(dataclasses.replace(trajectory, meta=meta), graded)
