"""A run's dispatch (a stage of ``pipeline.py``): the arm's own tools behind the execution memo,
and a model's own tool layer outside it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..models.base import Model
from ..models.tool_layer import tool_layer
from ..primitives.envelope import Envelope
from ..primitives.toolbox import Toolbox
from .build import kind_of
from .memo import ExecutionMemo, MemoDispatch

if TYPE_CHECKING:
    from .arms import Prepared

Dispatch = Callable[[str, dict[str, Any]], Envelope]


def default_dispatch(arm: str, toolbox: Toolbox) -> Dispatch:
    """What ``arm``'s built-in loop runs its tool calls on (its class says: ``tools``)."""
    return kind_of(arm).tools(toolbox)


def dispatch_for(
    arm: str,
    instance_id: str,
    prepared: Prepared,
    memo: ExecutionMemo | None,
    model: Model,
    seen: set[str] | None = None,
    tools: Dispatch | None = None,
) -> tuple[Dispatch, MemoDispatch]:
    """The run's dispatch, and the memo whose stats count what really ran. A fresh one per run
    (the first and each rerun): a sim's flaky tool wrapper keys its faults on the run's own
    ``run_test`` calls, so a rerun's replayed prefix sees the same ones. The wrapper sits
    outside the memo, so what the memo stores is always the real capture. Which model plays a
    tool layer is its own business (``models/tool_layer.py``): nothing here knows sim.
    ``seen``: the calls the item's earlier runs made (``DispatchStats``), one set per item;
    ``tools``: what the arm runs its calls on (default: ``arm``'s built-in loop's)."""
    scope = f"{arm}:{prepared.sandbox.mode}"
    own = tools or default_dispatch(arm, prepared.toolbox)
    memoized = MemoDispatch(memo, own, prepared.toolbox, scope, seen)
    workspace = prepared.toolbox.workspace
    dispatch = tool_layer(model, memoized, arm=arm, item=instance_id, workspace=workspace)
    return dispatch, memoized
