"""The bridge: an OpenAI-compatible loopback endpoint in front of the session's model, as an
agent's own client (the openai SDK) sees it."""

from __future__ import annotations

from collections.abc import Iterator

import openai
import pytest

from pytest_toolpolicy.agents.bridge import Bridge, BridgeLimits
from pytest_toolpolicy.models.base import Completion, ModelError, ModelRequest, Usage


class Stub:
    """A model whose usage is the endpoint's report: odd numbers, so a sum is telling."""

    def __init__(self, fail: bool = False) -> None:
        self.requests: list[ModelRequest] = []
        self.fail = fail

    def complete(self, request: ModelRequest) -> Completion:
        self.requests.append(request)
        if self.fail:
            raise ModelError("endpoint down: connection refused")
        n = len(self.requests)
        return Completion(f"reply {n}", Usage(101 * n, 7 * n), 0.001 * n, 0.01, model="stub")


@pytest.fixture
def served() -> Iterator[tuple[Bridge, openai.OpenAI]]:
    bridge = Bridge(Stub(), BridgeLimits(calls=3, max_completion_tokens=64), item="x-1")
    url = bridge.start_tcp()
    yield bridge, openai.OpenAI(base_url=url, api_key="anything", max_retries=0)
    bridge.close()


def test_replies_carry_the_endpoints_usage_exactly(served: tuple[Bridge, openai.OpenAI]) -> None:
    bridge, client = served
    parts = [{"type": "text", "text": "fix "}, {"type": "text", "text": "it"}]
    reply = client.chat.completions.create(
        model="m", messages=[{"role": "system", "content": "be brief"},
                             {"role": "user", "content": parts}],  # type: ignore[list-item]
        max_tokens=4096,
    )  # fmt: skip
    assert reply.choices[0].message.content == "reply 1"
    assert reply.usage is not None
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (101, 7)
    (sent,) = bridge.model.requests  # type: ignore[attr-defined]
    assert sent.messages[1] == {"role": "user", "content": "fix it"}
    assert sent.max_completion_tokens == 64 and (sent.item, sent.turn) == ("x-1", 0)
    assert bridge.tokens == 108 and bridge.cost_usd == pytest.approx(0.001)


def test_a_streamed_reply_ends_with_its_usage(served: tuple[Bridge, openai.OpenAI]) -> None:
    bridge, client = served
    chunks = list(client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], stream=True
    ))  # fmt: skip
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "reply 1" and chunks[-1].usage is not None
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (101, 7)
    assert bridge.exchanges[0].stream


def test_tools_are_refused_by_name(served: tuple[Bridge, openai.OpenAI]) -> None:
    bridge, client = served
    tool = {"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}
    with pytest.raises(openai.BadRequestError, match="this agent offered the model tools"):
        client.chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "hi"}],
            tools=[tool],  # type: ignore[list-item]
        )
    assert bridge.exchanges[0].completion is None and bridge.model.requests == []  # type: ignore[attr-defined]


def test_the_call_past_a_limit_is_refused_and_stops_the_run(
    served: tuple[Bridge, openai.OpenAI],
) -> None:
    bridge, client = served
    for _ in range(3):
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "go"}])
    assert bridge.stopped is None
    with pytest.raises(openai.RateLimitError, match="limit reached: calls: 3 made"):
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "go"}])
    assert bridge.stopped == "calls: 3 made" and len(bridge.served()) == 3


@pytest.mark.parametrize(
    ("limits", "stopped"),
    [
        (BridgeLimits(tokens=200), "tokens: 324 of 200"),  # 108, then 216: past 200 after two
        (BridgeLimits(cost_usd=0.002), "cost: $0.0030 of $0.002"),
    ],
)
def test_token_and_cost_limits(limits: BridgeLimits, stopped: str) -> None:
    with Bridge(Stub(), limits) as bridge:
        client = openai.OpenAI(base_url=bridge.start_tcp(), api_key="x", max_retries=0)
        with pytest.raises(openai.RateLimitError):
            for _ in range(5):
                client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": "go"}]
                )
        assert bridge.stopped == stopped


def test_a_model_error_reaches_the_agent_and_the_record() -> None:
    with Bridge(Stub(fail=True)) as bridge:
        client = openai.OpenAI(base_url=bridge.start_tcp(), api_key="x", max_retries=0)
        with pytest.raises(openai.APIStatusError, match="endpoint down") as caught:
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "go"}])
        assert caught.value.status_code == 502
        assert bridge.exchanges[0].error == "model error: endpoint down: connection refused"


def test_a_recorded_run_replays_without_the_endpoint(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The bridge answers with the session's model, cache included: recorded once, an agent's
    calls are served again with nothing sent (replay mode has no endpoint at all)."""
    from pytest_toolpolicy.models.cache import CachedModel

    path = tmp_path / "completions.sqlite"
    first = Stub()
    sent = [{"role": "user", "content": "fix it"}]
    with Bridge(CachedModel(first, path, "record", name="stub"), item="x-1") as bridge:
        client = openai.OpenAI(base_url=bridge.start_tcp(), api_key="x", max_retries=0)
        recorded = client.chat.completions.create(model="m", messages=sent)  # type: ignore[arg-type]
    with Bridge(CachedModel(None, path, "replay", name="stub"), item="x-1") as bridge:
        client = openai.OpenAI(base_url=bridge.start_tcp(), api_key="x", max_retries=0)
        replayed = client.chat.completions.create(model="m", messages=sent)  # type: ignore[arg-type]
        assert bridge.exchanges[0].completion is not None
        assert bridge.exchanges[0].completion.replayed
    assert replayed.choices[0].message.content == recorded.choices[0].message.content == "reply 1"
    assert replayed.usage == recorded.usage and len(first.requests) == 1


def test_an_agent_that_only_sends_refused_requests_is_stopped() -> None:
    """Requests that never reach the model (tools offered) are not turns, so the call limit
    never binds them: past ``refused`` of them the run is stopped, not left to spin."""
    tool = {"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}
    with Bridge(Stub(), BridgeLimits(calls=30, refused=3)) as bridge:
        client = openai.OpenAI(base_url=bridge.start_tcp(), api_key="x", max_retries=0)
        for n in range(3):
            assert bridge.stopped is None, n
            with pytest.raises(openai.BadRequestError):
                client.chat.completions.create(
                    model="m",
                    messages=[{"role": "user", "content": "hi"}],
                    tools=[tool],  # type: ignore[list-item]
                )
        assert bridge.stopped == "refused: 3 requests refused" and bridge.served() == []


def test_the_agents_stop_sequences_and_arrival_times_are_kept(
    served: tuple[Bridge, openai.OpenAI],
) -> None:
    import time

    bridge, client = served
    before = time.time()
    client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "go"}], stop=["Observation:", "\n```"]
    )
    client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "go"}], stop="END"
    )
    first, second = bridge.model.requests  # type: ignore[attr-defined]
    assert first.stop == ("Observation:", "\n```") and second.stop == ("END",)
    assert first.params()["stop"] == ["Observation:", "\n```"]
    assert "stop" not in ModelRequest(messages=first.messages).params()  # unset: no new cache key
    assert before <= bridge.exchanges[0].at <= bridge.exchanges[1].at <= time.time()
