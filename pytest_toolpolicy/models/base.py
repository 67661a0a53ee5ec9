"""The model seam: one request in, one completion out.

Only the policy's selection step and the baseline loop call a model; everything they need to
account for cost and tokens travels in ``Completion``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable


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
    messages: tuple[dict[str, str], ...]  # chat messages: {"role": ..., "content": ...}
    temperature: float = 0.0
    max_completion_tokens: int = 256
    # Where the request comes from, for error messages (a replay miss names item and turn);
    # not part of the cache key.
    item: str = ""
    turn: int = 0

    def params(self) -> dict[str, Any]:
        # Normalised types: `temperature=0` and `0.0` are one request (and one cache key).
        return {
            "temperature": float(self.temperature),
            "max_completion_tokens": int(self.max_completion_tokens),
        }


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

    The loop records it as a ``model_error`` outcome with this message and goes on with the next
    item. Messages never carry an API key.
    """


@runtime_checkable
class Model(Protocol):
    name: str

    def complete(self, request: ModelRequest) -> Completion: ...
