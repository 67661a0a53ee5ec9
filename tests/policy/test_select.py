"""Selection (spec §5): greedy, 256 tokens, one request per call, model errors propagate."""

from __future__ import annotations

import pytest

from pytest_toolpolicy.models.base import Completion, ModelError, ModelRequest, Usage
from pytest_toolpolicy.models.scripted import ScriptedModel
from pytest_toolpolicy.policy.select import select

MESSAGES = [{"role": "system", "content": "pre"}, {"role": "user", "content": "go"}]


class Recording:
    name = "recording"

    def __init__(self) -> None:
        self.requests: list[ModelRequest] = []

    def complete(self, request: ModelRequest) -> Completion:
        self.requests.append(request)
        return Completion(
            text='{"tool": "stop", "args": {"reason": "x"}}',
            usage=Usage(),
            cost_usd=0.0,
            latency_s=0.0,
        )


def test_request_parameters():
    model = Recording()
    completion = select(model, MESSAGES, item="inst-1", turn=3)
    assert completion.text.startswith('{"tool": "stop"')
    (request,) = model.requests
    assert request.temperature == 0.0
    assert request.max_completion_tokens == 256
    assert request.item == "inst-1" and request.turn == 3
    assert request.messages == tuple(MESSAGES)
    assert request.params() == {"temperature": 0.0, "max_completion_tokens": 256}


def test_through_a_scripted_model_and_model_errors_propagate():
    model = ScriptedModel(['{"tool": "read_entity", "args": {"selector": "a.b"}}'])
    assert select(model, MESSAGES, item="i", turn=0).text.startswith('{"tool": "read_entity"')
    with pytest.raises(ModelError, match="item i turn 1"):
        select(model, MESSAGES, item="i", turn=1)
