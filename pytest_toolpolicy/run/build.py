"""Which arm plays a side of the A/B, and building it (a stage of ``pipeline.py``): the policy
side is the policy loop; the current side is the session's agent, the stock loop unless
``--toolpolicy-current`` names another. The registry (``arm_registry.py``) holds what each
name builds; nothing here knows one arm from another."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..agents.spec import AgentSpec
from ..arm_registry import ArmKind, ArmSetup, arm_kind
from ..models.base import Model
from ..policy.config import PolicyConfig
from ..policy.retrieve import EmbedderSource
from ..primitives.embedder import shared_embedder
from ..primitives.envelope import Dispatch
from ..primitives.toolbox import Toolbox
from ..types import Arm, ToolCall

if TYPE_CHECKING:  # every arm's class is an ArmKind (mypy checks what the registry names)
    from ..agents.loop import ExternalLoop
    from ..current.loop import CurrentLoop
    from ..policy.loop import PolicyLoop

    _KINDS: tuple[ArmKind, ...] = (PolicyLoop, CurrentLoop, ExternalLoop)

ARMS = ("policy", "current")
BUILTIN = AgentSpec("builtin")


def check_arm(arm: str) -> None:
    if arm not in ARMS:
        raise ValueError(f"arm must be one of {', '.join(ARMS)}, got {arm!r}")


def player(arm: str, agent: AgentSpec | None = None) -> str:
    """The registry's name for who plays ``arm``: ``policy``, or the current side's agent."""
    check_arm(arm)
    return "policy" if arm == "policy" else (agent or BUILTIN).kind


def kind_of(arm: str, agent: AgentSpec | None = None) -> ArmKind:
    return arm_kind(player(arm, agent))


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
) -> Arm:
    """``arm``'s built-in loop. ``embedder``: what ``RETRIEVE=embed`` ranks tools with when the
    keyword map finds nothing (spec §4.2), by default the offline model ``search_code`` uses,
    loaded the first time the fallback fires (never, with the gate off)."""
    setup = ArmSetup(
        toolbox, model, config, variant=variant, dispatch=dispatch, suppress=suppress,
        embedder=embedder,
    )  # fmt: skip
    return kind_of(arm).build(setup)
