"""``--toolpolicy-current SPEC``: which agent plays the current arm.

- ``builtin`` (the default): the stock loop of ``current/loop.py``.
- ``cmd:COMMAND``: any program, run by ``/bin/sh -c`` in the sandbox with the workspace as its
  working directory; its task in ``$TOOLPOLICY_TASK_FILE`` and ``$TOOLPOLICY_TASK``, its model
  at ``$OPENAI_BASE_URL`` (the bridge). The directory the session started in (the user's
  project, where their agent's code lives) is visible read-only as ``$TOOLPOLICY_PROJECT``.
  Its tool calls are not visible to the harness.
- ``mini-swe-agent``: mini-swe-agent's own agent and prompts (the ``[mini-swe-agent]`` extra),
  text mode, through ``adapters/mini_swe_agent.py``; its actions are reported as steps, so its
  selection accuracy is measured.

Pure: the text in, a typed spec out, or ``AgentSpecError`` saying what is wrong.
"""

from __future__ import annotations

from dataclasses import dataclass

KINDS = ("builtin", "cmd", "mini-swe-agent")
# adapter -> the module it needs in the harness's interpreter (looked up, never imported here)
ADAPTERS = {"mini-swe-agent": "minisweagent"}


class AgentSpecError(ValueError):
    pass


@dataclass(frozen=True)
class AgentSpec:
    kind: str  # builtin | cmd | mini-swe-agent
    value: str = ""  # the command
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
    if text in ADAPTERS:
        import importlib.util

        if importlib.util.find_spec(ADAPTERS[text]) is None:
            raise AgentSpecError(
                f"{text} is not installed here: pip install 'pytest-toolpolicy[{text}]'"
            )
        return AgentSpec(text, "", project)
    raise AgentSpecError(
        f"unknown agent {text!r}: use builtin, cmd:COMMAND or {', '.join(ADAPTERS)}"
    )
