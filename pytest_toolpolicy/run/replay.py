"""The two pieces a counterfactual rerun is made of: a model that serves the original run's
answers, and a suppressor that removes one call.

A rerun starts from nothing and reaches the suppressed call without cost: each earlier model
call is the identical request at the identical turn, served from the item's record, and each
earlier tool call is served by the execution memo (an edit's entry writes the files it changed,
which is the workspace checkpoint after it). From the suppressed call on, the rerun is live.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..models.base import Completion, Model, ModelRequest
from ..models.cache import request_key
from ..types import ToolCall


@dataclass
class ModelStats:
    calls: int = 0  # requests really sent to the model
    served: int = 0  # requests answered from the record
    cost_usd: float = 0.0
    unpriced: int = 0
    tokens: int = 0


class RecordedModel:
    """Records every answer of ``inner``; with ``serve`` it answers a request seen before from
    the record. The original run records without serving, so that run is exactly what the bare
    model would have done.

    A served answer is the one recorded for the same request at the same turn, else for the
    same request at any turn (as a record/replay cache would serve it). The first rule makes
    the replayed prefix exact even where the original run sent one request twice and got two
    answers; the second means a rerun that keeps asking the same thing after a suppression
    (the prompt does not change when nothing was observed) costs nothing after the first ask.
    """

    def __init__(self, inner: Model, record: dict[Any, Completion], *, serve: bool) -> None:
        self.inner = inner
        self.name = getattr(inner, "name", "?")
        self.record = record
        self.serve = serve
        self.stats = ModelStats()

    def complete(self, request: ModelRequest) -> Completion:
        digest = request_key(self.name, request)[0]
        key = (request.turn, digest)
        if self.serve:
            found = self.record.get(key) or self.record.get(digest)
            if found is not None:
                self.stats.served += 1
                return found
        completion = self.inner.complete(request)  # a ModelError propagates, never recorded
        self.record.setdefault(key, completion)
        self.record.setdefault(digest, completion)
        self.stats.calls += 1
        self.stats.tokens += completion.usage.prompt_tokens + completion.usage.completion_tokens
        if completion.cost_usd is None:
            self.stats.unpriced += 1
        else:
            self.stats.cost_usd += completion.cost_usd
        return completion


class Suppressor:
    """Removes the ``ordinal``-th executed call of a run (0-based, in execution order).

    "Suppressed" means removed: the call does not run and leaves no observation, as if the model
    had not asked for it. A later request identical to it (same tool, same arguments) is removed
    too, so the rerun measures whether the run needed that call at all, not whether the model
    asks again one turn later.
    """

    def __init__(self, ordinal: int) -> None:
        self.ordinal = ordinal
        self.seen = 0
        self.removed: ToolCall | None = None

    def __call__(self, call: ToolCall) -> bool:
        if self.removed is not None:
            return call == self.removed
        index = self.seen
        self.seen += 1
        if index == self.ordinal:
            self.removed = call
            return True
        return False
