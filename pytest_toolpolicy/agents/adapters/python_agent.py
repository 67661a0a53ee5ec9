"""``python:MODULE:FACTORY``: a Python agent object (``agents/protocol.py``) as the current arm.
``FACTORY()`` returns it, in the sandbox, and its ``run(task)`` works in the workspace; the
runner (``agents/python_runner.py``) starts it. The module is found in the directory the
session started in, else among the installed packages (looked up, never imported, here). Its
tool calls are visible where it reports them (``task.report``).

``runner_launch`` is how any Python agent starts, a shipped one (``smolagents_agent.py``) too.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..spec import AgentSpecError

if TYPE_CHECKING:  # the run's own module loads only when an agent runs (see agents/loop.py)
    from ..external import Launch
    from ..spec import AgentSpec

FORM = "python:MODULE:FACTORY"
_AGENTS = Path(__file__).parents[1]
_DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


def check(value: str, project: str) -> str:
    module, sep, factory = value.partition(":")
    if not sep or not _DOTTED.fullmatch(module) or not _DOTTED.fullmatch(factory):
        raise AgentSpecError(
            f"python: needs MODULE:FACTORY (e.g. python:my_agent:make_agent), got {value!r}"
        )
    if not _module_found(module, project):
        raise AgentSpecError(
            f"python:{value}: no module {module!r} in {project or 'the current directory'}"
            " or among the installed packages"
        )
    return value


def launch(agent: AgentSpec, max_turns: int) -> Launch:
    # Of the project, only the agent's own top-level module or package is shown: the rest of
    # it (a .env, credentials) stays out of reach of a model that reads what it can.
    top = agent.value.partition(":")[0].split(".")[0]
    own = [p for p in (Path(agent.project) / top, Path(agent.project) / f"{top}.py")
           if agent.project and p.exists()]  # fmt: skip
    return runner_launch(agent.value, own[0] if own else None)


def runner_launch(target: str, own: Path | None = None) -> Launch:
    """``MODULE:FACTORY`` started by the runner, the harness's package visible read-only (for
    ``AgentTask``) and, with ``own``, that file or package of the project."""
    from ..external import SEEN, Launch
    from ..python_runner import LIB

    runner = f"{SEEN}/runner.py"
    project = f"{SEEN}/project"
    return Launch(
        (sys.executable, runner, target),
        env={"TOOLPOLICY_PROJECT": project} if own else {},
        ro_mounts=(
            (str(_AGENTS / "python_runner.py"), runner),
            (str(_AGENTS.parent), f"{LIB}/pytest_toolpolicy"),
            *(((str(own), f"{project}/{own.name}"),) if own else ()),
        ),
        observable=True,
    )


def _module_found(module: str, project: str) -> bool:
    """Whether ``module`` will import in the sandbox: its file in the project, or its top-level
    package installed (looked up without running it: its code runs only in the sandbox)."""
    parts = module.split(".")
    if project:
        base = Path(project).joinpath(*parts)
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            return True
        if len(parts) > 1 and Path(project).joinpath(parts[0]).is_dir():
            return True  # a package of the project (its submodules found when it runs)
    return importlib.util.find_spec(parts[0]) is not None
