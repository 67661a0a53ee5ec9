"""``--toolpolicy-current SPEC``: which agent plays the current arm.

- ``builtin`` (the default): the stock loop of ``current/loop.py``.
- any external agent of the registry (``arm_registry.py``), each described by its adapter in
  ``adapters/``: ``python:MODULE:FACTORY`` (a Python agent object, ``protocol.py``),
  ``cmd:COMMAND`` (any program), ``mini-swe-agent`` (mini-swe-agent's own agent and prompts, the
  ``[mini-swe-agent]`` extra) and ``smolagents`` (its ``CodeAgent``, the ``[smolagents]`` extra).

An adapter says what its name takes: ``check(value, project)`` checks the text after ``name:``
(a name without it takes none), ``NEEDS`` names the module its extra installs.

Pure but for looking modules up (an adapter's module is imported, an agent's never): the text
in, a typed spec out, or ``AgentSpecError`` saying what is wrong.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from ..arm_registry import adapter, adapters


class AgentSpecError(ValueError):
    pass


@dataclass(frozen=True)
class AgentSpec:
    kind: str  # builtin, or an external agent's name in the registry
    value: str = ""  # what follows ``kind:`` (the command, or MODULE:FACTORY)
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
    module = adapter(kind) if kind in adapters() else None
    check = getattr(module, "check", None)
    if module is None or (sep and check is None):
        forms = [getattr(adapter(name), "FORM", name) for name in adapters()]
        raise AgentSpecError(f"unknown agent {text!r}: use builtin, {', '.join(forms)}")
    needs = getattr(module, "NEEDS", None)
    if needs and importlib.util.find_spec(needs) is None:
        raise AgentSpecError(
            f"{kind} is not installed here: pip install 'pytest-toolpolicy[{kind}]'"
        )
    return AgentSpec(kind, check(value.strip(), project) if check else "", project)
