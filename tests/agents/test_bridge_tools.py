"""An agent that calls the model with ``tools``, through the bridge to an OpenAI-compatible
endpoint (a stub on loopback), as its own client (the openai SDK) sees it: the tools and the
history's calls reach the endpoint, the reply's calls come back, usage is the endpoint's to the
token, and each call is one of the agent's steps."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from pytest_toolpolicy.agents.bridge import Bridge, BridgeLimits, Exchange
from pytest_toolpolicy.agents.chat_request import BadRequest, prompt_bound, read_chat
from pytest_toolpolicy.agents.loop import _turn
from pytest_toolpolicy.models.openai_model import OpenAIModel
from pytest_toolpolicy.models.prices import Price, PriceTable
from pytest_toolpolicy.types import ToolCall

from ..models.stub_server import Reply, StubServer, chat_body, loopback_only

BASH = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "run a command",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
    },
}
CALL = {
    "id": "call_7",
    "type": "function",
    "function": {"name": "bash", "arguments": json.dumps({"command": "pytest -q"})},
}


def calls_reply(usage: dict[str, int]) -> Reply:
    body = chat_body("", usage)
    body["choices"][0]["message"] = {"role": "assistant", "content": None, "tool_calls": [CALL]}
    body["choices"][0]["finish_reason"] = "tool_calls"
    return Reply(body=body)


@pytest.fixture
def endpoint(monkeypatch: pytest.MonkeyPatch) -> Iterator[StubServer]:
    loopback_only(monkeypatch)
    monkeypatch.setenv("STUB_KEY", "stub-key-0123456789")
    replies = [
        calls_reply({"prompt_tokens": 211, "completion_tokens": 19}),
        Reply(body=chat_body("done", {"prompt_tokens": 263, "completion_tokens": 3})),
    ]
    with StubServer(*replies) as stub:
        yield stub


def bridged(stub: StubServer, **limits: Any) -> tuple[Bridge, openai.OpenAI]:
    prices = PriceTable({"m": Price(1.0, 0.5, 2.0)})  # $ per million tokens
    model = OpenAIModel("m", base_url=stub.url, api_key_env="STUB_KEY", prices=prices)
    bridge = Bridge(model, BridgeLimits(**limits), item="x-1")
    client = openai.OpenAI(base_url=bridge.start_tcp(), api_key="agent-has-no-key", max_retries=0)
    return bridge, client


def test_tools_reach_the_endpoint_and_calls_come_back_with_exact_usage(
    endpoint: StubServer,
) -> None:
    bridge, client = bridged(endpoint, max_completion_tokens=256)
    try:
        first = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "fix it"}],
            tools=[BASH], tool_choice="auto",  # type: ignore[list-item]
        )  # fmt: skip
        (call,) = first.choices[0].message.tool_calls or []
        assert first.choices[0].finish_reason == "tool_calls"
        assert (call.id, call.function.name) == ("call_7", "bash")
        assert json.loads(call.function.arguments) == {"command": "pytest -q"}
        second = client.chat.completions.create(
            model="m",
            messages=[
                {"role": "user", "content": "fix it"},
                first.choices[0].message.model_dump(exclude_none=True),  # type: ignore[misc]
                {"role": "tool", "tool_call_id": "call_7", "content": "1 passed"},
            ],
            tools=[BASH],  # type: ignore[list-item]
        )
        assert second.choices[0].message.content == "done"
    finally:
        bridge.close()
    sent = [r.body for r in endpoint.requests]
    assert sent[0]["tools"] == [BASH] and sent[0]["tool_choice"] == "auto"
    assert sent[1]["messages"][1]["tool_calls"] == [CALL]
    assert sent[1]["messages"][2] == {
        "role": "tool",
        "content": "1 passed",
        "tool_call_id": "call_7",
    }
    # the endpoint's usage, token for token, and its price
    assert [e.completion.usage.total_tokens for e in bridge.exchanges if e.completion] == [230, 266]
    assert bridge.tokens == 496 and first.usage and first.usage.total_tokens == 230
    assert bridge.cost_usd == pytest.approx((211 + 263) * 1e-6 + (19 + 3) * 2e-6)


def test_the_calls_are_the_agents_steps(endpoint: StubServer) -> None:
    bridge, client = bridged(endpoint)
    try:
        client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "go"}],
            tools=[BASH],  # type: ignore[list-item]
        )
    finally:
        bridge.close()
    turn = _turn(bridge.exchanges[0], [])
    assert turn.executed == (ToolCall("bash", {"command": "pytest -q"}),)
    assert turn.request == ToolCall("bash", {"command": "pytest -q"})
    # steps the agent reported itself win over the calls its model made
    reported = _turn(bridge.exchanges[0], [{"tool": "edit", "args": {"path": "a.py"}}])
    assert reported.executed == (ToolCall("edit", {"path": "a.py"}),)


def test_arguments_that_are_not_json_are_kept_whole() -> None:
    from pytest_toolpolicy.models.base import Completion, Usage

    bad = {"id": "c", "type": "function", "function": {"name": "bash", "arguments": "ls -la"}}
    completion = Completion("", Usage(1, 1), 0.0, 0.0, extra={"tool_calls": [bad]})
    turn = _turn(Exchange(0, (), {}, completion), [])
    assert turn.executed == (ToolCall("bash", {"arguments": "ls -la"}),)
    # nested past any bound (json.loads would raise RecursionError building the trajectory)
    deep = {**bad, "function": {"name": "bash", "arguments": "[" * 100_000}}
    completion = Completion("", Usage(1, 1), 0.0, 0.0, extra={"tool_calls": [deep]})
    turn = _turn(Exchange(0, (), {}, completion), [])
    assert turn.executed == (ToolCall("bash", {"arguments": "[" * 100_000}),)


def test_a_streamed_reply_carries_its_calls(endpoint: StubServer) -> None:
    bridge, client = bridged(endpoint)
    try:
        chunks = list(client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "go"}], tools=[BASH],  # type: ignore[list-item]
            stream=True,
        ))  # fmt: skip
    finally:
        bridge.close()
    deltas = [c.choices[0] for c in chunks if c.choices]
    (call,) = deltas[0].delta.tool_calls or []
    assert (call.index, call.id, call.function and call.function.name) == (0, "call_7", "bash")
    assert deltas[-1].finish_reason == "tool_calls" and chunks[-1].usage is not None


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"tools": [{"type": "function", "function": {}}]}, "invalid tools[0].function"),
        ({"tools": [{"type": "retrieval"}]}, "invalid tools[0]"),
        ({"tools": "bash"}, "invalid tools: 'bash'"),
        ({"tools": [BASH], "tool_choice": "always"}, "invalid tool_choice: 'always'"),
        ({"functions": [BASH["function"]]}, "invalid functions"),
        (
            {"messages": [{"role": "assistant", "content": "", "tool_calls": [{"id": 1}]}]},
            "invalid messages[0].tool_calls[0]",
        ),
    ],
)
def test_a_bad_tools_request_is_named(body: dict[str, Any], named: str) -> None:
    with pytest.raises(BadRequest, match=named.replace("[", r"\[")):
        read_chat({"messages": [{"role": "user", "content": "hi"}]} | body)


def test_a_bad_tools_request_is_the_agents_refusal(endpoint: StubServer) -> None:
    bridge, client = bridged(endpoint)
    try:
        with pytest.raises(openai.BadRequestError, match="invalid tool_choice"):
            client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "go"}],
                tools=[BASH], tool_choice="always",  # type: ignore[arg-type, list-item]
            )  # fmt: skip
    finally:
        bridge.close()
    assert endpoint.requests == [] and bridge.exchanges[0].refused


def test_the_tools_count_toward_the_worst_case() -> None:
    chat = read_chat({"messages": [{"role": "user", "content": "go"}], "tools": [BASH] * 3})
    bare = prompt_bound(chat.messages)
    assert prompt_bound(chat.messages, chat.tools) > bare + 3 * len(json.dumps(BASH["function"]))
    with_calls = read_chat(
        {"messages": [{"role": "assistant", "content": "", "tool_calls": [CALL]}]}
    )
    assert prompt_bound(with_calls.messages) > len(json.dumps(CALL))
