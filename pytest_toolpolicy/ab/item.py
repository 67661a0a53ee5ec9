"""One A/B item: an instance × arm × variant run, graded and measured (``row.py`` turns it
into its results row)."""

from __future__ import annotations

import dataclasses
import fcntl
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..bench.grade import GradeResult, grade
from ..bench.instance import Instance
from ..models.base import Completion, Model
from ..models.request_options import with_options
from ..paths import safe_name
from ..policy.config import PolicyConfig
from ..primitives.sandbox import Sandbox
from ..types import Trajectory
from . import counterfactual
from .arms import Prepared, build_loop, dispatch_for, prepare, task_of, with_meta
from .generation import Generation
from .memo import DispatchStats, ExecutionMemo, grade_key
from .replay import RecordedModel, Suppressor
from .row import ItemSpec, row_of


class RerunError(RuntimeError):
    """A counterfactual rerun that measured nothing (its model failed): the item fails."""


@dataclass
class Harness:
    """What every item of a session shares."""

    instances: dict[str, Instance]
    make_model: Callable[[], Model]  # a fresh model per item: no state leaks between items
    workdir: Path
    sandbox: Sandbox
    memo: ExecutionMemo | None = None
    repos: Path | None = None
    tests_visible: bool = True
    config: PolicyConfig = field(default_factory=PolicyConfig)  # the candidate policy
    counterfactual: bool = True
    gold_dir: Path | None = None
    meta: dict[str, Any] = field(default_factory=dict)  # model, seed, dataset: copied to rows
    generation: Generation = field(default_factory=Generation)  # what every request carries


def run_item(spec: ItemSpec, harness: Harness) -> tuple[dict[str, Any], Trajectory]:
    """Runs in ``workdir/<item id>/repo``, the same path in every session: paths reach the
    prompt through test output, and a path that changed from run to run would make two runs
    over the same state send different requests. A lock keeps concurrent sessions apart."""
    directory = harness.workdir / safe_name(spec.id)
    directory.mkdir(parents=True, exist_ok=True)
    with open(lock_path(directory), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            return _run_item(spec, harness, directory)
        finally:
            shutil.rmtree(directory, ignore_errors=True)


def lock_path(directory: Path) -> Path:
    """The item's lock beside its directory. The whole name plus ``.lock``: an item id holds
    dots (``policy-no:trigger.lint``), so ``with_suffix`` would give two gates one lock."""
    return directory.parent / (directory.name + ".lock")


def _run_item(
    spec: ItemSpec, harness: Harness, directory: Path
) -> tuple[dict[str, Any], Trajectory]:
    start = time.monotonic()
    instance = harness.instances[spec.instance_id]
    config = harness.config.without(spec.gate) if spec.gate else harness.config
    prepared = prepare(
        instance,
        workdir=directory,
        repos=harness.repos,
        sandbox=harness.sandbox,
        tests_visible=harness.tests_visible,
        name="repo",
    )
    inner = harness.make_model()
    # The session's request settings sit outside the cache (its key is the request as sent)
    # and inside the counterfactual record (a rerun sends the same requests).
    sent = with_options(inner, harness.generation.options_for(spec.arm))
    record: dict[Any, Completion] = {}
    model = RecordedModel(sent, record, serve=False)
    dispatch, memo = dispatch_for(spec.arm, spec.instance_id, prepared, harness.memo, inner)
    loop = build_loop(
        spec.arm, prepared.toolbox, model, config, variant=spec.variant, dispatch=dispatch
    )
    trajectory = loop.run(task_of(instance))
    graded = _grade(instance, prepared, harness)
    resolved = bool(graded and graded.resolved)

    def rerun(suppressor: Suppressor) -> tuple[bool, Any, DispatchStats]:
        _reset(prepared)
        replayed = RecordedModel(sent, record, serve=True)
        dispatch, tools = dispatch_for(spec.arm, spec.instance_id, prepared, harness.memo, inner)
        again = build_loop(
            spec.arm, prepared.toolbox, replayed, config, dispatch=dispatch, suppress=suppressor
        )
        ended = again.run(task_of(instance)).outcome
        if ended.outcome == "model_error":  # not a measurement: never counted as a flip
            raise RerunError(
                f"counterfactual rerun {suppressor.ordinal} (call suppressed:"
                f" {suppressor.removed}) could not finish: {ended.detail.get('reason')}"
            )
        result = _grade(instance, prepared, harness)
        return bool(result and result.resolved), replayed.stats, tools.stats

    precision = counterfactual.measure(
        trajectory, resolved, rerun if harness.counterfactual else None
    )
    trajectory = with_meta(trajectory, instance, prepared, graded)
    trajectory = dataclasses.replace(
        trajectory,
        meta={
            **trajectory.meta,
            "counterfactual": dataclasses.asdict(precision),
            "tools": dataclasses.asdict(memo.stats),
            "seed": harness.meta.get("seed"),
            "dataset": harness.meta.get("dataset"),
            "generation": harness.generation.record(),
        },
    )
    row = row_of(trajectory, instance, spec, harness.gold_dir)
    row["duration_s"] = round(time.monotonic() - start, 3)
    return row, trajectory


def _grade(instance: Instance, prepared: Prepared, harness: Harness) -> GradeResult | None:
    if instance.underspecified:
        return None
    workspace = prepared.toolbox.workspace
    assert workspace is not None
    key = ""
    if harness.memo is not None:
        tree = workspace.tree_hash()
        key = grade_key(instance.instance_id, tree, prepared.toolbox.python, prepared.tests_visible)
        found = harness.memo.get(key)
        if found is not None:
            return GradeResult(**found)
    result = grade(workspace, instance, sandbox=prepared.sandbox, env=prepared.env)
    if key and result.status != "infra_error":  # an infrastructure failure may not recur
        harness.memo.put(key, dataclasses.asdict(result))  # type: ignore[union-attr]
    return result


def _reset(prepared: Prepared) -> None:
    """Back to the start state for a rerun; the code index follows what the restore changed
    (``refresh`` compares lstat signatures, so no diff of the tree is needed to know it)."""
    toolbox = prepared.toolbox
    workspace = toolbox.workspace
    assert workspace is not None
    workspace.restore(workspace.base)
    toolbox.index.refresh()
