"""Call precision by counterfactual ablation (spec §9 measure 4).

Each executed call of a resolved trajectory is suppressed in its own rerun (``replay.py`` says
what suppressed means and how a rerun reaches that call without cost). The call is *necessary*
iff the rerun ends unresolved. Calls of an unresolved run are not necessary by definition (no
removal can flip it from resolved), so they are counted, not rerun. What the reruns cost is
reported apart and never enters the measures.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..types import ToolCall, Trajectory
from .memo import DispatchStats
from .replay import ModelStats, Suppressor

# One rerun: given the suppressor, whether it ended resolved, and what it spent.
Rerun = Callable[[Suppressor], tuple[bool, ModelStats, DispatchStats]]


@dataclass
class CallPrecision:
    calls: int = 0
    necessary: int = 0
    reruns: int = 0
    model_calls: int = 0  # requests really sent during reruns
    model_served: int = 0  # requests served from the original run's record
    tool_calls: int = 0  # every tool call the reruns made (what naive reruns would execute)
    tool_executions: int = 0  # of which really run
    cost_usd: float = 0.0
    unpriced: int = 0
    tokens: int = 0
    per_call: list[dict[str, Any]] = field(default_factory=list)


def executed_calls(trajectory: Trajectory) -> list[ToolCall]:
    return [call for turn in trajectory.turns for call in turn.executed]


def measure(trajectory: Trajectory, resolved: bool, rerun: Rerun | None) -> CallPrecision:
    calls = executed_calls(trajectory)
    out = CallPrecision(calls=len(calls))
    if not resolved or rerun is None:
        return out
    for ordinal, call in enumerate(calls):
        still_resolved, model, tools = rerun(Suppressor(ordinal))
        out.reruns += 1
        out.necessary += not still_resolved
        out.model_calls += model.calls
        out.model_served += model.served
        out.cost_usd += model.cost_usd
        out.unpriced += model.unpriced
        out.tokens += model.tokens
        out.tool_calls += tools.calls
        out.tool_executions += tools.executed
        out.per_call.append(
            {"ordinal": ordinal, "tool": call.tool, "necessary": not still_resolved}
        )
    return out
