"""Selection (spec §5): the only place in the policy that talks to a model.

Greedy sampling, one short reply: ``temperature=0``, ``max_completion_tokens=256``. A
``ModelError`` propagates; the loop turns it into the ``model_error`` outcome.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..models.base import Completion, Model, ModelRequest

TEMPERATURE = 0.0
MAX_COMPLETION_TOKENS = 256


def select(model: Model, messages: Sequence[dict[str, str]], *, item: str, turn: int) -> Completion:
    request = ModelRequest(
        messages=tuple(messages),
        temperature=TEMPERATURE,
        max_completion_tokens=MAX_COMPLETION_TOKENS,
        item=item,
        turn=turn,
    )
    return model.complete(request)
