"""The stages of one run (``pipeline.py`` strings them together): the workspace an instance
starts from over the environment it was handed (``envs/stage.py`` resolved it before the run;
nothing here builds one). The run's dispatch, its arm and its task are stages of their own
(``dispatch.py``, ``build.py``, ``task.py``), their names kept importable from here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..bench.instance import Instance
from ..bench.workspaces import materialize
from ..envs.environment import Environment
from ..envs.spec import EnvironmentSetupError
from ..envs.stage import Unavailable
from ..grading.grade import apply_patch
from ..grading.own_runner import OWN_PARSERS, OwnRunner
from ..primitives.sandbox import Sandbox
from ..primitives.toolbox import Toolbox
from .build import ARMS as ARMS
from .build import build_loop as build_loop
from .build import check_arm as check_arm
from .dispatch import Dispatch as Dispatch
from .dispatch import default_dispatch as default_dispatch
from .dispatch import dispatch_for as dispatch_for
from .task import task_of as task_of


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
    env: Environment | Unavailable | None = None,
    repos: Path | None = None,
    sandbox: Sandbox | None = None,
    tests_visible: bool = True,
    name: str | None = None,
) -> Prepared:
    """``env``: what the run's environment stage resolved for the instance (``envs/stage.py``),
    None for a bundled one (the harness's interpreter); an ``Unavailable`` is raised here, where
    the item meets it. With ``tests_visible`` the instance's ``test_patch`` is part of what the
    agent starts from (spec §3.1's post-patch trigger runs the FAIL_TO_PASS tests, so they must
    exist); the agent's patch never includes it, and grading resets and re-applies it as
    SWE-bench does."""
    sandbox = sandbox or Sandbox.from_env()
    workspace = materialize(instance, workdir, repos=repos, name=name)
    if tests_visible and instance.test_patch.strip():
        error = apply_patch(workspace.root, instance.test_patch)
        if error:
            raise ValueError(f"instance {instance.instance_id}: test_patch does not apply: {error}")
        workspace.advance_base("toolpolicy: FAIL_TO_PASS tests visible to the agent")
    if isinstance(env, Unavailable):
        env.raise_error()
    if instance.path is not None:
        env = None
    elif env is None:
        why = "its environment was not resolved before its run (envs/stage.py)"
        raise EnvironmentSetupError(f"{instance.instance_id}: {why}")
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
