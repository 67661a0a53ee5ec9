"""The one registry of arms: a name, the arm it builds, imported only when a run names it (as
mini-swe-agent's ``_AGENT_MAPPING`` and ``get_agent_class``).

- ``policy``: the candidate loop (``policy/loop.py``); ``builtin``: the stock loop
  (``current/loop.py``), the current arm unless ``--toolpolicy-current`` names another;
- ``cmd``, ``python``, ``mini-swe-agent``, ``smolagents``: external agents, each an adapter
  (``agents/adapters/``) that the external loop (``agents/loop.py``) runs in the sandbox, its
  model calls through the bridge.

An adapter is a module with ``launch(agent, max_turns) -> Launch`` (how it starts in the
sandbox) and, where it needs them, ``NEEDS`` (the module its extra installs), ``check(value,
project)`` (the text after ``name:``, checked and returned; a name without it takes none) and
``FORM`` (how a user writes it). A new adapter is its file, one line in ``ARMS`` and its extra in
pyproject's optional dependencies.

What the registry hands out is an ``ArmKind``: the arm's class, which says before one is built
what the pipeline must know of it, and builds it from an ``ArmSetup``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Protocol, cast

from .types import Arm, ToolCall

if TYPE_CHECKING:  # types only: the arms import this module, never the other way round
    from .agents.external import Launch
    from .agents.spec import AgentSpec
    from .models.base import Model
    from .policy.config import PolicyConfig
    from .policy.retrieve import EmbedderSource
    from .primitives.envelope import Dispatch
    from .primitives.sandbox import Sandbox
    from .primitives.toolbox import Toolbox


@dataclass(frozen=True)
class ArmSetup:
    """What any arm is built from; each takes what it needs."""

    toolbox: Toolbox
    model: Model
    config: PolicyConfig  # the gates (the policy loop), the turn and cost budgets (every arm)
    variant: str | None = None  # None: the arm's own name
    dispatch: Dispatch | None = None  # runs a tool (the A/B's memo); None: the loop's own tools
    suppress: Callable[[ToolCall], bool] | None = None  # removes a call (counterfactual reruns)
    embedder: EmbedderSource | None = None  # what retrieve.embed ranks with (the policy loop)
    agent: AgentSpec | None = None  # the external agent and its adapter
    sandbox: Sandbox | None = None  # where an external agent runs
    wall_s: float = 1800.0  # an external agent's wall seconds on the item
    max_reply_tokens: int | None = None  # the session's cap on a reply an external agent asks


class ArmKind(Protocol):
    """An arm's class, as the registry hands it out."""

    @property
    def calls_removable(self) -> bool:
        """``Arm.calls_removable``, known before one is built (the model it is handed records
        its answers for the reruns only when they can happen)."""
        ...

    @property
    def own_requests(self) -> bool:
        """Its requests are its own (an external agent's): the session's reply schema and
        output cap are not laid over them."""
        ...

    def build(self, setup: ArmSetup) -> Arm: ...

    def tools(self, toolbox: Toolbox) -> Dispatch:
        """What its tool calls run on unless the setup's ``dispatch`` says otherwise."""
        ...


class AdapterModule(Protocol):
    """What an adapter module holds (its optional names read with ``getattr``)."""

    def launch(self, agent: AgentSpec, max_turns: int) -> Launch: ...


@dataclass(frozen=True)
class Loop:
    """A loop of this package: ``module:Class``, the class an ``ArmKind``."""

    path: str

    def kind(self) -> ArmKind:
        module, _, name = self.path.partition(":")
        return cast(ArmKind, getattr(importlib.import_module(module), name))


@dataclass(frozen=True)
class Adapter:
    """An external agent's adapter module, run by the external loop."""

    module: str

    def kind(self) -> ArmKind:
        return Loop("pytest_toolpolicy.agents.loop:ExternalLoop").kind()

    def load(self) -> ModuleType:
        return importlib.import_module(self.module)


ARMS: dict[str, Loop | Adapter] = {
    "policy": Loop("pytest_toolpolicy.policy.loop:PolicyLoop"),
    "builtin": Loop("pytest_toolpolicy.current.loop:CurrentLoop"),
    "cmd": Adapter("pytest_toolpolicy.agents.adapters.command"),
    "python": Adapter("pytest_toolpolicy.agents.adapters.python_agent"),
    "mini-swe-agent": Adapter("pytest_toolpolicy.agents.adapters.mini_swe_agent"),
    "smolagents": Adapter("pytest_toolpolicy.agents.adapters.smolagents_agent"),
}


def arm_kind(name: str) -> ArmKind:
    """The class of the arm ``name`` (``KeyError`` naming the known ones)."""
    entry = ARMS.get(name)
    if entry is None:
        raise KeyError(f"no arm {name!r}: the registry has {', '.join(ARMS)}")
    return entry.kind()


def adapters() -> dict[str, Adapter]:
    """The registry's external agents, in its order."""
    return {name: entry for name, entry in ARMS.items() if isinstance(entry, Adapter)}


def adapter(name: str) -> AdapterModule:
    """The adapter module of the external agent ``name`` (``KeyError`` for any other name)."""
    entry = adapters().get(name)
    if entry is None:
        raise KeyError(f"no agent adapter {name!r}: the registry has {', '.join(adapters())}")
    return cast(AdapterModule, entry.load())
