"""What the bridge reads of a chat request (``agents/chat_request.py``): each parameter checked
and named when it cannot be taken, and a request's worst case in tokens before it is sent."""

from __future__ import annotations

import json
import math

import pytest

from pytest_toolpolicy.agents.chat_request import BadRequest, params_of, prompt_bound, read_chat

GO = [{"role": "user", "content": "go"}]


@pytest.mark.parametrize("value", [math.nan, math.inf, -0.1, 2.01])
def test_a_temperature_json_can_carry_but_no_endpoint_takes_is_refused(value: float) -> None:
    body = json.loads(json.dumps({"messages": GO, "temperature": value}))  # NaN, Infinity
    with pytest.raises(BadRequest, match=r"^invalid temperature: .* \(expected a number 0..2\)$"):
        read_chat(body)


def test_what_is_read_and_what_is_sent() -> None:
    chat = read_chat(
        {"messages": [{"role": "developer", "content": [{"type": "text", "text": "a"},
                                                        {"type": "text", "text": "b"}]},
                      {"role": "assistant", "content": None}],
         "temperature": 1, "max_tokens": 50, "max_completion_tokens": 70, "seed": 0,
         "stop": ["", "END"], "stream": True, "n": 1, "top_p": "ignored: never read or sent"}
    )  # fmt: skip
    assert chat.messages == (
        {"role": "user", "content": "ab"},
        {"role": "assistant", "content": ""},
    )
    assert (chat.temperature, chat.max_tokens, chat.stop, chat.stream) == (1.0, 70, ("END",), True)
    assert chat.seed is None  # 0 is read, and not sent, as before it was checked
    assert read_chat({"messages": GO, "seed": -1}).seed is None
    assert read_chat({"messages": GO, "seed": 7}).seed == 7


def test_the_prompt_bound_is_the_utf8_bytes_plus_the_templates_overhead() -> None:
    # "é" is 2 bytes, "𝛑" 4, a lone surrogate (which JSON can carry) 3: never more tokens
    messages = ({"role": "user", "content": "é𝛑\ud800"}, {"role": "assistant", "content": ""})
    assert prompt_bound(messages) == (2 + 4 + 3) + 2 * 16 + 32


def test_the_params_kept_of_a_refusal_are_small() -> None:
    kept = params_of({"messages": GO, "temperature": "h" * 500, "stop": ["a", "b"], "seed": 3})
    assert kept["stop"] == ["a", "b"] and kept["seed"] == 3
    assert kept["temperature"].startswith("'hhh") and len(kept["temperature"]) == 80
