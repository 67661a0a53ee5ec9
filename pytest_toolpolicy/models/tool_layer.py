"""A model that also plays part of a run's tool layer, asked for by capability, never by type.

``sim`` is the one such model: it plans its edits against the run's workspace, and plays an
unreliable tool wrapper (its ``flaky_tool`` fault). The harness calls :func:`tool_layer` with
whatever model it holds; a wrapper around a model (the record/replay cache, request options)
passes the question on to what it wraps, so the harness never looks inside one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ..primitives.envelope import Dispatch
    from ..primitives.workspace import Workspace


@runtime_checkable
class ToolLayer(Protocol):
    def tool_layer(
        self, dispatch: Dispatch, *, arm: str, item: str, workspace: Workspace | None
    ) -> Dispatch:
        """The run's dispatch as this model plays it: ``dispatch`` itself, or a wrapper."""
        ...


def tool_layer(
    model: object, dispatch: Dispatch, *, arm: str, item: str, workspace: Workspace | None
) -> Dispatch:
    """``dispatch`` as ``model`` plays it for one run of ``item`` in ``arm`` (make one per run:
    a layer may count the run's calls); ``dispatch`` itself for a model without a tool layer."""
    if isinstance(model, ToolLayer):
        return model.tool_layer(dispatch, arm=arm, item=item, workspace=workspace)
    return dispatch
