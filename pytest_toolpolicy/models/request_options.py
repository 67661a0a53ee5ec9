"""Request settings a session lays over every call a loop makes: the output limit, a seed, a
reply format the server must keep to, and logprobs.

The loops say what they ask (messages, temperature, their own token limit); a session's
settings are applied here, at the model seam, so both arms get them the same way and the
record/replay key (made from the request as sent) includes them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .base import Completion, Model, ModelRequest, Usage, cost_of
from .tool_layer import tool_layer

if TYPE_CHECKING:
    from ..primitives.envelope import Dispatch
    from ..primitives.workspace import Workspace


@dataclass(frozen=True)
class RequestOptions:
    max_completion_tokens: int | None = None  # None: the loop's own limit
    seed: int | None = None
    response_format: Mapping[str, Any] | None = None
    top_logprobs: int | None = None  # None or 0: no logprobs asked for
    trial: int = 1  # the item's trial (see ModelRequest.trial)

    def apply(self, request: ModelRequest) -> ModelRequest:
        changes: dict[str, Any] = {}
        if self.trial != 1:
            changes["trial"] = self.trial
        if self.max_completion_tokens is not None:
            changes["max_completion_tokens"] = self.max_completion_tokens
        if self.seed is not None:
            changes["seed"] = self.seed
        if self.response_format is not None:
            changes["response_format"] = self.response_format
        if self.top_logprobs:
            changes["top_logprobs"] = self.top_logprobs
        return dataclasses.replace(request, **changes) if changes else request


def json_schema_format(name: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    """OpenAI's ``response_format`` for a JSON schema, which llama.cpp and vLLM also read (as a
    grammar the sampler keeps to). Not ``strict``: OpenAI's strict mode refuses a free-form
    object such as a call's ``args``."""
    return {"type": "json_schema", "json_schema": {"name": name, "schema": dict(schema)}}


class OptionedModel:
    """``inner`` with ``options`` applied to every request."""

    def __init__(self, inner: Model, options: RequestOptions) -> None:
        self.inner = inner
        self.options = options
        self.name = inner.name

    def complete(self, request: ModelRequest) -> Completion:
        return self.inner.complete(self.options.apply(request))

    def cost_of(self, usage: Usage) -> float | None:
        return cost_of(self.inner, usage)

    def tool_layer(
        self, dispatch: Dispatch, *, arm: str, item: str, workspace: Workspace | None
    ) -> Dispatch:
        """The wrapped model's tool layer: a wrapper changes requests, never the tools."""
        return tool_layer(self.inner, dispatch, arm=arm, item=item, workspace=workspace)


def with_options(model: Model, options: RequestOptions) -> Model:
    return model if options == RequestOptions() else OptionedModel(model, options)
