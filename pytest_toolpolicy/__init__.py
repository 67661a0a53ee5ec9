"""pytest-toolpolicy: a reversible tool-calling policy for LLM coding agents, as a pytest plugin.

The public API, importable from here::

    from pytest_toolpolicy import PolicyLoop, PolicyConfig, Task, Toolbox, Workspace

- loops: ``PolicyLoop`` (the candidate policy), ``CurrentLoop`` (the baseline), ``Task``;
- configuration: ``PolicyConfig`` (gates, caps, budgets);
- tools: ``Toolbox`` (the six primitives over a workspace), ``Workspace``;
- the model seam: ``Model``, ``ModelRequest``, ``Completion``, ``Usage``, ``ModelError``,
  ``build_model`` and ``parse_model_spec`` (the spec strings ``openai:…``, ``local:…``, ``sim``);
- the reply parser: ``parse_reply`` → ``Parsed``;
- records: ``Trajectory``, ``Turn``, ``ToolCall``, ``Observation``, ``Outcome``;
- your own agent as the current arm (``--toolpolicy-current python:MODULE:FACTORY``): ``Agent``
  (the protocol) and ``AgentTask`` (what its ``run`` is given).

Each is imported when first asked for, so loading the plugin into an unrelated pytest run
imports none of them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "PolicyLoop": "policy.loop",
    "CurrentLoop": "current.loop",
    "PolicyConfig": "policy.config",
    "Toolbox": "primitives.toolbox",
    "Workspace": "primitives.workspace",
    "Model": "models.base",
    "ModelRequest": "models.base",
    "Completion": "models.base",
    "Usage": "models.base",
    "ModelError": "models.base",
    "build_model": "models.spec",
    "parse_model_spec": "models.spec",
    "parse_reply": "policy.parse",
    "Parsed": "policy.parse",
    "Task": "types",
    "Trajectory": "types",
    "Turn": "types",
    "ToolCall": "types",
    "Observation": "types",
    "Outcome": "types",
    "Agent": "agents.protocol",
    "AgentTask": "agents.protocol",
}
__all__ = [  # a literal, for linters and type checkers; a test holds it equal to _EXPORTS
    "__version__",
    "PolicyLoop",
    "CurrentLoop",
    "PolicyConfig",
    "Toolbox",
    "Workspace",
    "Model",
    "ModelRequest",
    "Completion",
    "Usage",
    "ModelError",
    "build_model",
    "parse_model_spec",
    "parse_reply",
    "Parsed",
    "Task",
    "Trajectory",
    "Turn",
    "ToolCall",
    "Observation",
    "Outcome",
    "Agent",
    "AgentTask",
]

if TYPE_CHECKING:
    from .agents.protocol import Agent, AgentTask
    from .current.loop import CurrentLoop
    from .models.base import Completion, Model, ModelError, ModelRequest, Usage
    from .models.spec import build_model, parse_model_spec
    from .policy.config import PolicyConfig
    from .policy.loop import PolicyLoop
    from .policy.parse import Parsed, parse_reply
    from .primitives.toolbox import Toolbox
    from .primitives.workspace import Workspace
    from .types import Observation, Outcome, Task, ToolCall, Trajectory, Turn


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_toolpolicy' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # once: later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
