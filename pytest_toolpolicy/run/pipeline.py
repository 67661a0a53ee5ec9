"""Run one instance in one arm: the one pipeline every runner goes through.

Stages, in order: a fresh workspace at what the agent starts from, over the environment the
caller's stage resolved (``arms.prepare``; ``envs/stage.py``: no stage of a run builds one); the
run's dispatch (the execution memo, and a model's own tool layer outside it); the arm (an
``Arm``, built by its registry entry: ``build.py``, ``arm_registry.py``) on the task; grading
(memoized by tree hash); the counterfactual reruns that score necessary calls; the record.
The A/B's items (``item.py``), ``toolpolicy run`` (``cli/run.py``) and the
sim's fault-rate measurement (``fault_rates.py``) call :func:`run_instance` and differ only
in their :class:`RunSetup`.

Both arms get the same model, the same workspace state and the same budgets; grading reads
only the captured test outcomes of the final workspace, never anything the model said.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..agents.spec import AgentSpec
from ..arm_registry import ArmSetup
from ..bench.gold_source import DERIVED_KEY
from ..bench.gold_source import record as gold_record
from ..bench.instance import Instance
from ..envs.environment import Environment
from ..envs.stage import Unavailable
from ..grading.grade import GradeResult, grade
from ..models.base import Completion, Model
from ..models.request_options import with_options
from ..policy.config import PolicyConfig
from ..primitives.embedder import shared_embedder
from ..primitives.sandbox import Sandbox
from ..types import Arm, Trajectory
from . import counterfactual
from .arms import Prepared, prepare
from .build import check_arm, kind_of
from .counterfactual import CallPrecision
from .dispatch import dispatch_for
from .generation import Generation
from .memo import DispatchStats, ExecutionMemo, grade_key
from .replay import ModelStats, RecordedModel, Suppressor
from .task import task_of


class RerunError(RuntimeError):
    """A counterfactual rerun that measured nothing (its model failed): the item fails."""


@dataclass(frozen=True)
class RunSetup:
    """Where and how a run happens; everything but the instance, arm and model."""

    sandbox: Sandbox | None = None  # None: the best this host has (``Sandbox.from_env``)
    repos: Path | None = None
    tests_visible: bool = True
    memo: ExecutionMemo | None = None  # shared by reruns, items and sessions when given
    generation: Generation | None = None  # the session's request settings; None: the model as is
    graded: bool = True  # a fault rate needs only the trajectory
    counterfactual: bool = False  # rerun each call of a resolved run to score necessary calls
    meta: Mapping[str, Any] = field(default_factory=dict)  # seed, dataset: into the trajectory
    trial: int | None = None  # which of --toolpolicy-trials K runs (None: the only one)
    agent: AgentSpec | None = None  # the current arm's external agent (None or builtin: stock)
    agent_timeout: float = 1800.0  # its wall seconds on the item


@dataclass(frozen=True)
class RunRecord:
    """What one run produced: the trajectory (its meta carries everything below, so a saved
    trajectory alone rebuilds its row), the grade, the call precision and the tool counts."""

    trajectory: Trajectory
    grade: GradeResult | None  # None: under-specified (not resolvable), or not graded
    precision: CallPrecision | None  # None: not graded
    tools: DispatchStats
    duration_s: float

    @property
    def resolved(self) -> bool:
        return bool(self.grade and self.grade.resolved)


def run_instance(
    instance: Instance,
    arm: str,
    model: Model,
    workdir: Path,
    *,
    config: PolicyConfig | None = None,
    variant: str | None = None,
    setup: RunSetup | None = None,
    name: str | None = None,
    env: Environment | Unavailable | None = None,
) -> RunRecord:
    """One run of ``instance`` in ``arm``, in ``workdir`` (its repository at ``workdir/name``),
    in ``env``: what the environment stage resolved for it (None for a bundled instance)."""
    start = time.monotonic()
    check_arm(arm)
    setup = setup or RunSetup()
    config = config or PolicyConfig()
    sandbox = setup.sandbox or Sandbox.from_env()
    prepared = prepare(
        instance,
        workdir=workdir,
        env=env,
        repos=setup.repos,
        sandbox=sandbox,
        tests_visible=setup.tests_visible,
        name=name,
    )
    # The session's request settings sit outside the cache (its key is the request as sent)
    # and inside the counterfactual record (a rerun sends the same requests).
    trial = setup.trial or 1
    generation = setup.generation
    # Who plays the arm (the registry's) says what it takes: whether its calls can be removed
    # one at a time (counterfactual reruns; an external agent's cannot), whether its requests
    # are its own (no reply schema or output cap of the built-in loops').
    kind = kind_of(arm, setup.agent)
    own = kind.own_requests
    options = generation.options_for(arm, trial, external=own) if generation else None
    sent = with_options(model, options) if options else model
    record: dict[Any, Completion] = {}
    reruns = setup.counterfactual and kind.calls_removable
    first: Model = RecordedModel(sent, record, serve=False) if reruns else sent
    seen: set[str] = set()  # the item's own calls, across its first run and its reruns
    tools = kind.tools(prepared.toolbox)
    dispatch, memo = dispatch_for(
        arm, instance.instance_id, prepared, setup.memo, model, seen, tools
    )
    player: Arm = kind.build(
        ArmSetup(
            prepared.toolbox, first, config, variant=variant, dispatch=dispatch,
            embedder=shared_embedder, agent=setup.agent, sandbox=prepared.toolbox.sandbox,
            wall_s=setup.agent_timeout,
            max_reply_tokens=generation.cap_for(arm) if generation else None,
        )
    )  # fmt: skip
    trajectory = player.run(task_of(instance, prepared.env))
    graded: GradeResult | None = None
    precision: CallPrecision | None = None
    if setup.graded:
        graded = _grade(instance, prepared, setup.memo)

        def rerun(suppressor: Suppressor) -> tuple[bool, ModelStats, DispatchStats]:
            _reset(prepared)
            replayed = RecordedModel(sent, record, serve=True)
            dispatch, ran = dispatch_for(
                arm, instance.instance_id, prepared, setup.memo, model, seen, tools
            )
            again = kind.build(
                ArmSetup(prepared.toolbox, replayed, config, dispatch=dispatch,
                         suppress=suppressor, embedder=shared_embedder)
            )  # fmt: skip
            ended = again.run(task_of(instance, prepared.env)).outcome
            if ended.outcome == "model_error":  # not a measurement: never counted as a flip
                raise RerunError(
                    f"counterfactual rerun {suppressor.ordinal} (call suppressed:"
                    f" {suppressor.removed}) could not finish: {ended.detail.get('reason')}"
                )
            result = _grade(instance, prepared, setup.memo)
            return bool(result and result.resolved), replayed.stats, ran.stats

        resolved = bool(graded and graded.resolved)
        precision = counterfactual.measure(trajectory, resolved, rerun if reruns else None)
    meta = {
        **trajectory.meta,
        "underspecified": instance.underspecified,
        "sandbox": sandbox.mode,
        "tests_visible": setup.tests_visible,
        "grade": dataclasses.asdict(graded) if graded else None,
        **({"counterfactual": dataclasses.asdict(precision)} if precision else {}),
        "tools": dataclasses.asdict(memo.stats),
        "repo": instance.repo,
        # The label derived from the gold patch (the trajectory does not hold the patch), so a
        # row rebuilt from the saved trajectory is scored as this one is.
        DERIVED_KEY: gold_record(
            instance.instance_id,
            instance.problem_statement,
            instance.patch,
            instance.underspecified,
        ),
        "trial": setup.trial,
        # The simulator's own seed (the session's seed, moved on by one a trial).
        **({"sim_seed": seed} if isinstance(seed := getattr(model, "seed", None), int) else {}),
        **setup.meta,
        **({"generation": setup.generation.record()} if setup.generation else {}),
    }
    return RunRecord(
        dataclasses.replace(trajectory, meta=meta),
        graded,
        precision,
        memo.stats,
        round(time.monotonic() - start, 3),
    )


def _grade(
    instance: Instance, prepared: Prepared, memo: ExecutionMemo | None
) -> GradeResult | None:
    if instance.underspecified:
        return None
    workspace = prepared.toolbox.workspace
    assert workspace is not None
    key = ""
    if memo is not None:
        tree = workspace.tree_hash()
        key = grade_key(instance.instance_id, tree, prepared.toolbox.python, prepared.tests_visible)
        found = memo.get(key)
        if found is not None:
            return GradeResult(**found)
    result = grade(workspace, instance, sandbox=prepared.sandbox, env=prepared.env)
    if memo is not None and result.status != "infra_error":  # an infra failure may not recur
        memo.put(key, dataclasses.asdict(result))
    return result


def _reset(prepared: Prepared) -> None:
    """Back to the start state for a rerun; the code index follows what the restore changed
    (``refresh`` compares lstat signatures, so no diff of the tree is needed to know it)."""
    toolbox = prepared.toolbox
    workspace = toolbox.workspace
    assert workspace is not None
    workspace.restore(workspace.base)
    toolbox.index.refresh()
