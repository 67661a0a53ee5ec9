"""The stages of one run (``pipeline.py`` strings them together): the workspace an instance
starts from, the run's dispatch, the arm's loop, the task."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..bench.instance import Instance
from ..bench.workspaces import materialize
from ..current.loop import CurrentLoop
from ..current.tools import call_tool
from ..envs.cache import Environment, environment_for
from ..grading.directives import runner_args
from ..grading.grade import apply_patch
from ..grading.own_runner import OWN_PARSERS, OwnRunner
from ..grading.testids import PYTEST_PARSERS
from ..models.base import Model
from ..models.tool_layer import tool_layer
from ..policy.config import PolicyConfig
from ..policy.loop import PolicyLoop, Task
from ..policy.retrieve import EmbedderSource
from ..primitives.embedder import shared_embedder
from ..primitives.envelope import Envelope
from ..primitives.sandbox import Sandbox
from ..primitives.toolbox import Toolbox
from ..types import ToolCall
from .memo import ExecutionMemo, MemoDispatch

ARMS = ("policy", "current")
Dispatch = Callable[[str, dict[str, Any]], Envelope]


@dataclass(frozen=True)
class Prepared:
    """An instance's workspace at what the agent starts from, and the toolbox over it."""

    toolbox: Toolbox
    env: Environment | None
    sandbox: Sandbox
    tests_visible: bool


def prepare(
    instance: Instance,
    *,
    workdir: Path,
    repos: Path | None = None,
    sandbox: Sandbox | None = None,
    tests_visible: bool = True,
    name: str | None = None,
) -> Prepared:
    """With ``tests_visible`` the instance's ``test_patch`` is part of what the agent starts from
    (spec §3.1's post-patch trigger runs the FAIL_TO_PASS tests, so they must exist); the agent's
    patch never includes it, and grading resets and re-applies it as SWE-bench does."""
    sandbox = sandbox or Sandbox.from_env()
    workspace = materialize(instance, workdir, repos=repos, name=name)
    if tests_visible and instance.test_patch.strip():
        error = apply_patch(workspace.root, instance.test_patch)
        if error:
            raise ValueError(f"instance {instance.instance_id}: test_patch does not apply: {error}")
        workspace.advance_base("toolpolicy: FAIL_TO_PASS tests visible to the agent")
    env = (
        None
        if instance.path is not None
        else environment_for(instance, repos=repos, sandbox=sandbox)
    )
    # Grading's rules for the agent's own runs too: the environment's interpreter, the
    # workspace as the installed package (seen at /testbed), the files its install generated,
    # and no plugins for a bundled project (stdlib + pytest) instead of every plugin of this venv.
    if env:
        env.seed(workspace.root)
        runs = env.sandbox(sandbox, workspace.root)
    else:
        runs = sandbox.bound(env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    box = Toolbox(
        workspace.root,
        sandbox=runs,
        python=env.python if env else None,
        workspace=workspace,
        package_view=env is not None,
    )
    spec = env.spec if env is not None else None
    if spec is not None and spec.log_parser in OWN_PARSERS:
        box.runner = OwnRunner(spec.test_cmd, spec.log_parser, _defined_in(box)).command
    return Prepared(box, env, sandbox, tests_visible)


def _defined_in(box: Toolbox) -> Callable[[str], list[str]]:
    """name -> the files of the workspace defining a function of that name, now."""

    def find(name: str) -> list[str]:
        box.index.refresh()
        return [e.file for e in box.index.entities() if e.kind == "function" and e.name == name]

    return find


def check_arm(arm: str) -> None:
    if arm not in ARMS:
        raise ValueError(f"arm must be one of {', '.join(ARMS)}, got {arm!r}")


def default_dispatch(arm: str, toolbox: Toolbox) -> Dispatch:
    if arm == "policy":
        return toolbox.call
    return lambda tool, args: call_tool(toolbox, tool, args)


def dispatch_for(
    arm: str,
    instance_id: str,
    prepared: Prepared,
    memo: ExecutionMemo | None,
    model: Model,
    seen: set[str] | None = None,
) -> tuple[Dispatch, MemoDispatch]:
    """The run's dispatch, and the memo whose stats count what really ran. A fresh one per run
    (the first and each rerun): a sim's flaky tool wrapper keys its faults on the run's own
    ``run_test`` calls, so a rerun's replayed prefix sees the same ones. The wrapper sits
    outside the memo, so what the memo stores is always the real capture. Which model plays a
    tool layer is its own business (``models/tool_layer.py``): nothing here knows sim.
    ``seen``: the calls the item's earlier runs made (``DispatchStats``), one set per item."""
    scope = f"{arm}:{prepared.sandbox.mode}"
    memoized = MemoDispatch(
        memo, default_dispatch(arm, prepared.toolbox), prepared.toolbox, scope, seen
    )
    workspace = prepared.toolbox.workspace
    dispatch = tool_layer(model, memoized, arm=arm, item=instance_id, workspace=workspace)
    return dispatch, memoized


def build_loop(
    arm: str,
    toolbox: Toolbox,
    model: Model,
    config: PolicyConfig,
    *,
    variant: str | None = None,
    dispatch: Dispatch | None = None,
    suppress: Callable[[ToolCall], bool] | None = None,
    embedder: EmbedderSource | None = shared_embedder,
) -> PolicyLoop | CurrentLoop:
    """``embedder``: what ``RETRIEVE=embed`` ranks tools with when the keyword map finds
    nothing (spec §4.2), by default the offline model ``search_code`` uses, loaded the first
    time the fallback fires (never, with the gate off)."""
    check_arm(arm)
    if arm == "policy":
        return PolicyLoop(
            toolbox,
            model,
            config,
            embedder=embedder,
            variant=variant or "policy",
            dispatch=dispatch,
            suppress=suppress,
        )
    return CurrentLoop(
        toolbox,
        model,
        max_turns=config.max_turns,
        max_cost_usd=config.max_cost_usd,
        variant=variant or "current",
        dispatch=dispatch,
        suppress=suppress,
    )


def task_of(instance: Instance, env: Environment | None = None) -> Task:
    """The loop's task. Its post-patch test target: ``repro_target``, else the FAIL_TO_PASS
    ids as the repository's runner takes them (pytest node ids for an id SWE-bench cut short;
    django's and sympy's ids as they are, which the toolbox's ``OwnRunner`` knows)."""
    target = instance.test_target
    parser = env.spec.log_parser if env is not None and env.spec is not None else "pytest"
    if not instance.repro_target and instance.FAIL_TO_PASS and parser in PYTEST_PARSERS:
        target = " ".join(runner_args(parser, instance.FAIL_TO_PASS)) or target
    return Task(instance.instance_id, instance.problem_statement, target)
