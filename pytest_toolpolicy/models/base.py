"""The model seam: one request in, one completion out.

Only the policy's selection step and the baseline loop call a model; everything they need to
account for cost and tokens travels in ``Completion``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol, TypeAlias, runtime_checkable

# Whose fault a failed call is: the request's (the endpoint refused what it was sent, an HTTP
# 4xx about the request itself: the caller's failure, measured as such) or the endpoint's (it
# could not answer: a 5xx, a timeout, no connection, an auth failure, a malformed reply, a
# replay miss; the item measured nothing of its arm).
Blame: TypeAlias = Literal["request", "endpoint"]


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0  # the part of prompt_tokens served from the provider's cache
    estimated: bool = False  # counted locally (e.g. for `sim`), not reported by a provider
    # The provider sent no usage at all: the zeros above are unknown counts, not zero tokens,
    # and the completion's cost is unknown too.
    missing: bool = False

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class ModelRequest:
    # chat messages: {"role": ..., "content": ...}; an external agent's that calls tools may
    # add an assistant's "tool_calls" and a tool result's "tool_call_id" (``chat_request.py``).
    messages: tuple[dict[str, Any], ...]
    temperature: float = 0.0
    max_completion_tokens: int = 256
    # OpenAI's `response_format` (a json_schema the reply must match), or None: free text.
    response_format: Mapping[str, Any] | None = None
    seed: int | None = None
    top_logprobs: int | None = None  # ask for each token's logprob and this many alternatives
    # Where the reply ends (OpenAI's ``stop``): an external agent's own (smolagents stops at
    # its code fence's close); the project's loops set none.
    stop: tuple[str, ...] = ()
    # Functions an external agent offers the model (OpenAI's ``tools``, each checked by
    # ``chat_request``) and its ``tool_choice``; the reply's calls are ``extra["tool_calls"]``.
    tools: tuple[Mapping[str, Any], ...] = ()
    tool_choice: str | Mapping[str, Any] | None = None
    # Where the request comes from, for error messages (a replay miss names item and turn);
    # not part of the cache key.
    item: str = ""
    turn: int = 0
    # Which repeated trial of an item this is (--toolpolicy-trials): never sent, but part of the
    # cache key from the second trial on, so a recording holds each trial's own answers.
    trial: int = 1

    def params(self) -> dict[str, Any]:
        # Normalised types: `temperature=0` and `0.0` are one request (and one cache key). A
        # setting left unset is absent, so requests (and recordings) made before it existed keep
        # their keys.
        params: dict[str, Any] = {
            "temperature": float(self.temperature),
            "max_completion_tokens": int(self.max_completion_tokens),
        }
        if self.response_format is not None:
            params["response_format"] = dict(self.response_format)
        if self.seed is not None:
            params["seed"] = int(self.seed)
        if self.top_logprobs is not None:
            params["logprobs"] = True
            params["top_logprobs"] = int(self.top_logprobs)
        if self.stop:
            params["stop"] = list(self.stop)
        if self.tools:
            params["tools"] = [dict(t) for t in self.tools]
        if self.tool_choice is not None:
            tool_choice = self.tool_choice
            params["tool_choice"] = (
                tool_choice if isinstance(tool_choice, str) else dict(tool_choice)
            )
        return params


@dataclass(frozen=True)
class Completion:
    text: str
    usage: Usage
    cost_usd: float | None  # None: the price of this model is unknown (never a silent $0)
    latency_s: float
    model: str = ""
    replayed: bool = False  # served from the record/replay cache
    extra: dict[str, Any] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        data = asdict(self)
        data["usage"]["total_tokens"] = self.usage.total_tokens
        return data


class ModelError(Exception):
    """The model could not answer (retries exhausted, a malformed body, a replay miss...).

    ``blame`` says whose failure it is (``Blame``), set where the error is classified: an
    endpoint's error is the loop's ``model_error`` outcome with this message; a request the
    endpoint refused ends the run as the caller's own failure, measured. Messages never carry
    an API key. ``usage`` is what the failed call consumed where the server reported it (a
    malformed body that still carried usage); None means unknown, never zero: a timed-out
    generation spent tokens nobody counted.
    """

    def __init__(
        self, message: str, *, usage: Usage | None = None, blame: Blame = "endpoint"
    ) -> None:
        super().__init__(message)
        self.usage = usage
        self.blame: Blame = blame

    def record(self) -> dict[str, Any]:
        """The failed attempt as a turn's completion record: its tokens where known, else
        flagged ``missing``, and an unknown cost, so a failed call never reads as $0. A
        refused request is answered before any generation: nothing spent, $0."""
        refused = self.blame == "request"
        usage = self.usage or Usage(missing=not refused)
        cost = 0.0 if refused and self.usage is None else None
        data: dict[str, Any] = {"text": "", "usage": asdict(usage), "cost_usd": cost}
        data["error"] = str(self)
        data["blame"] = self.blame
        data["usage"]["total_tokens"] = usage.total_tokens
        return data


@runtime_checkable
class Model(Protocol):
    name: str

    def complete(self, request: ModelRequest) -> Completion: ...


@runtime_checkable
class Priced(Protocol):
    """A model that can say what a usage would cost before the call (a wrapper asks what it
    wraps), so a cap can refuse a call it cannot afford instead of paying it first."""

    def cost_of(self, usage: Usage) -> float | None: ...


def cost_of(model: object, usage: Usage) -> float | None:
    """What ``usage`` would cost at ``model``'s price; None where unknown (no price, or a
    model that cannot say, such as a replay with nothing behind it)."""
    return model.cost_of(usage) if isinstance(model, Priced) else None
