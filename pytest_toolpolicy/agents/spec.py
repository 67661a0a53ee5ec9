"""``--toolpolicy-current SPEC``: which agent plays the current arm.

- ``builtin`` (the default): the stock loop of ``current/loop.py``.
- ``python:MODULE:FACTORY``: a Python agent object (``protocol.py``): ``FACTORY()`` returns it,
  in the sandbox, and its ``run(task)`` works in the workspace. The module is found in the
  directory the session started in, else among the installed packages. Its tool calls are
  visible where it reports them (``task.report``).
- ``cmd:COMMAND``: any program, run by ``/bin/sh -c`` in the sandbox with the workspace as its
  working directory; its task in ``$TOOLPOLICY_TASK_FILE`` and ``$TOOLPOLICY_TASK``, its model
  at ``$OPENAI_BASE_URL`` (the bridge). The directory the session started in (the user's
  project, where their agent's code lives) is visible read-only as ``$TOOLPOLICY_PROJECT``.
  Its tool calls are not visible to the harness.
- ``mini-swe-agent``: mini-swe-agent's own agent and prompts (the ``[mini-swe-agent]`` extra),
  text mode, through ``adapters/mini_swe_agent.py``; its actions are reported as steps, so its
  selection accuracy is measured.
- ``smolagents``: smolagents' ``CodeAgent`` with a ``bash`` tool (the ``[smolagents]`` extra),
  a Python agent of ``adapters/smolagents_agent.py``; each tool it calls is reported.

Pure but for looking modules up (never importing them): the text in, a typed spec out, or
``AgentSpecError`` saying what is wrong.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path

KINDS = ("builtin", "python", "cmd", "mini-swe-agent", "smolagents")
# adapter -> the module it needs in the harness's interpreter (looked up, never imported here)
ADAPTERS = {"mini-swe-agent": "minisweagent", "smolagents": "smolagents"}
_DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


class AgentSpecError(ValueError):
    pass


@dataclass(frozen=True)
class AgentSpec:
    kind: str  # builtin | python | cmd | mini-swe-agent | smolagents
    value: str = ""  # the command, or MODULE:FACTORY
    project: str = ""  # the directory the session started in, shown to the agent read-only

    @property
    def external(self) -> bool:
        return self.kind != "builtin"

    @property
    def label(self) -> str:
        """How tables and trajectories name it."""
        return self.kind if not self.value else f"{self.kind}:{self.value}"


def parse_agent(text: str | None, project: str = "") -> AgentSpec:
    text = (text or "").strip()
    if not text or text == "builtin":
        return AgentSpec("builtin")
    kind, sep, value = text.partition(":")
    if kind == "cmd":
        if not sep or not value.strip():
            raise AgentSpecError("cmd: needs a command, e.g. cmd:'python my_agent.py'")
        return AgentSpec("cmd", value.strip(), project)
    if kind == "python":
        return AgentSpec("python", _python_target(value.strip(), project), project)
    if text in ADAPTERS:
        if importlib.util.find_spec(ADAPTERS[text]) is None:
            raise AgentSpecError(
                f"{text} is not installed here: pip install 'pytest-toolpolicy[{text}]'"
            )
        return AgentSpec(text, "", project)
    raise AgentSpecError(
        f"unknown agent {text!r}: use builtin, python:MODULE:FACTORY, cmd:COMMAND or"
        f" {', '.join(ADAPTERS)}"
    )


def _python_target(value: str, project: str) -> str:
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
