"""The bridge: an OpenAI-compatible loopback endpoint in front of the session's model, as an
agent's own client (the openai SDK) sees it."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from pytest_toolpolicy.agents.bridge import Bridge, BridgeLimits
from pytest_toolpolicy.models.base import Completion, ModelError, ModelRequest, Usage
from pytest_toolpolicy.models.openai_model import OpenAIModel
from pytest_toolpolicy.models.prices import Price, PriceTable

from ..models.stub_server import Reply, StubServer, loopback_only, ok


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
        # 108, 216, 324, then 432: past 1000 after four (each call's worst case, 58, fit)
        (BridgeLimits(tokens=1000, max_completion_tokens=8), "tokens: 1080 of 1000"),
        (BridgeLimits(cost_usd=0.002), "cost: $0.0030 of $0.002"),  # the stub has no price
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
    """Requests refused as the agent's own mistakes (a tool without a name) are turns, and past
    ``refused`` of them the run is stopped, not left to spin, whatever turns are left."""
    tool = {"type": "function", "function": {"parameters": {"type": "object"}}}
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


def client_of(bridge: Bridge) -> openai.OpenAI:
    return openai.OpenAI(base_url=bridge.start_tcp(), api_key="x", max_retries=0)


GO = [{"role": "user", "content": "go"}]


@pytest.mark.parametrize(
    ("params", "reason"),
    [
        ({"temperature": "hot"}, "invalid temperature: 'hot' (expected a number 0..2)"),
        ({"temperature": 5}, "invalid temperature: 5 (expected a number 0..2)"),
        ({"temperature": True}, "invalid temperature: True (expected a number 0..2)"),
        (
            {"max_tokens": 0},
            "invalid max_tokens: 0 (expected a whole number of tokens, at least 1)",
        ),
        ({"max_completion_tokens": "10"}, "invalid max_completion_tokens: '10'"),
        ({"seed": 2**64}, f"invalid seed: {2**64} (expected a 64-bit integer)"),
        ({"seed": 1.5}, "invalid seed: 1.5"),
        ({"stop": [1]}, "invalid stop: [1] (expected a string or a list of at most 4 strings)"),
        ({"stop": ["a", "b", "c", "d", "e"]}, "invalid stop: ['a', 'b', 'c', 'd', 'e']"),
        ({"n": 2}, "invalid n: 2 (expected 1: the bridge serves one choice)"),
        ({"stream": "yes"}, "invalid stream: 'yes' (expected true or false)"),
        ({"messages": []}, "invalid messages: [] (expected a non-empty list of chat messages)"),
        ({"messages": [{"content": "x"}]}, "invalid messages[0]: {'content': 'x'}"),
        ({"messages": [{"role": "user", "content": 7}]}, "invalid messages[0].content: 7"),
        (
            {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]},
            "invalid messages[0].content[0]: {'type': 'image_url', 'image_url': {}}",
        ),
    ],
)
def test_a_bad_parameter_is_refused_by_name_recorded_and_counted(
    params: dict[str, Any], reason: str
) -> None:
    with Bridge(Stub(), BridgeLimits(calls=5)) as bridge:
        client = client_of(bridge)
        with pytest.raises(openai.BadRequestError) as refused:
            client.chat.completions.create(**{"model": "m", "messages": GO, **params})
        body = refused.value.body
        assert isinstance(body, dict) and str(body["message"]).startswith(reason)
        assert bridge.model.requests == []  # type: ignore[attr-defined]
        (kept,) = bridge.exchanges
        assert (kept.fault, kept.completion, kept.turn) == ("request", None, True)
        assert kept.error is not None and kept.error.startswith(reason)
        assert len(bridge.turns()) == 1 and bridge.stopped is None


def test_a_refused_parameter_is_kept_as_sent_and_a_long_one_cut() -> None:
    with Bridge(Stub()) as bridge:
        client = client_of(bridge)
        for stop in ("x" * 5000, ["a"] * 9):
            with pytest.raises(openai.BadRequestError):
                client.chat.completions.create(model="m", messages=GO, temperature=3, stop=stop)  # type: ignore[call-overload]
        long, many = (e.params for e in bridge.exchanges)
        assert long["temperature"] == 3 and len(long["stop"]) == 80  # its repr, cut
        assert many["stop"].startswith("['a', 'a',")


def test_200_bad_requests_on_a_3_turn_budget_reach_the_endpoint_3_times(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What the endpoint refuses as the request's fault is the agent's: answered 400 with the
    endpoint's reason, one of its turns and one of its refusals. It cannot be retried past the
    turn budget (nor past the refusal cap) to reach the endpoint again and again."""
    loopback_only(monkeypatch)
    refusal = Reply(400, {"error": {"message": "temperature 1.5 is not supported"}})
    with StubServer(refusal) as stub:
        model = OpenAIModel("m", base_url=stub.url, max_retries=0, prices=PriceTable())
        with Bridge(model, BridgeLimits(calls=3, refused=None)) as bridge:
            client = client_of(bridge)
            answers = []
            for _ in range(200):
                try:
                    client.chat.completions.create(model="m", messages=GO, temperature=1.5)  # type: ignore[arg-type]
                except openai.APIStatusError as exc:
                    answers.append(exc.status_code)
    assert len(stub.requests) == 3 and answers == [400] * 3 + [429] * 197
    assert bridge.stopped == "calls: 3 made" and len(bridge.turns()) == 3
    first = bridge.exchanges[0]
    assert first.fault == "request" and first.error is not None
    assert first.error.startswith("refused by the endpoint: openai:m at ")
    assert first.error.endswith("request rejected (400): temperature 1.5 is not supported")


def test_the_endpoints_own_failure_is_no_turn_and_no_refusal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loopback_only(monkeypatch)
    with StubServer(Reply(503, {"error": {"message": "overloaded"}})) as stub:
        model = OpenAIModel("m", base_url=stub.url, max_retries=0, prices=PriceTable())
        with Bridge(model, BridgeLimits(calls=1)) as bridge:
            client = client_of(bridge)
            for _ in range(2):
                with pytest.raises(openai.APIStatusError) as failed:
                    client.chat.completions.create(model="m", messages=GO)  # type: ignore[arg-type]
                assert failed.value.status_code == 502
    assert [e.fault for e in bridge.exchanges] == ["endpoint", "endpoint"]
    assert bridge.turns() == [] and bridge.stopped is None and len(stub.requests) == 2


def test_a_31_mb_body_is_refused_with_413_and_never_forwarded() -> None:
    with Bridge(Stub(), BridgeLimits(calls=5)) as bridge:
        client = client_of(bridge)
        huge = [{"role": "user", "content": "x" * (31 << 20)}]
        with pytest.raises(openai.APIStatusError) as refused:
            client.chat.completions.create(model="m", messages=huge)  # type: ignore[arg-type]
        assert refused.value.status_code == 413
        assert "body too large: 325" in str(refused.value)
        assert "the bridge takes at most 4194304" in str(refused.value)
        # the connection is still usable, and the refusal was one of the agent's turns
        client.chat.completions.create(model="m", messages=GO)  # type: ignore[arg-type]
        assert bridge.model.requests[0].messages == tuple(GO)  # type: ignore[attr-defined]
        refusal, served = bridge.exchanges
        assert (refusal.fault, refusal.messages, refusal.turn) == ("request", (), True)
        assert served.completion is not None and len(bridge.turns()) == 2


def post_raw(bridge: Bridge, rest: bytes, *, close: bool = True) -> tuple[bytes, bytes]:
    """A POST to the bridge's chat path as bytes on the line: (its answer's head, body)."""
    port = int(bridge.start_tcp().rsplit(":", 1)[1].split("/")[0])
    closing = b"Connection: close\r\n" if close else b""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n" + closing + rest)
        answer = b""
        while chunk := conn.recv(65536):  # until the bridge closes the line
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return head, body


def test_a_body_announced_past_any_bound_is_refused_before_one_byte_is_read() -> None:
    with Bridge(Stub()) as bridge:
        # not asked to close: the bridge does, having read none of the body
        head, body = post_raw(bridge, b"Content-Length: 1000000000000\r\n\r\n{", close=False)
        assert head.startswith(b"HTTP/1.1 413 ") and b"connection: close" in head.lower()
        assert "body too large: 1000000000000 bytes" in json.loads(body)["error"]["message"]
        assert [e.fault for e in bridge.exchanges] == ["request"]


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"{not json", "the body is not JSON"),
        (b"[" * 100 + b"]" * 100, "the body is not JSON (nested deeper than 64 levels)"),
        (b'"a string"', "the body is not a JSON object"),
    ],
)
def test_a_body_that_is_no_chat_request_is_refused_and_counted(raw: bytes, reason: str) -> None:
    with Bridge(Stub(), BridgeLimits(refused=1)) as bridge:
        head, body = post_raw(bridge, b"Content-Length: %d\r\n\r\n%s" % (len(raw), raw))
        assert head.startswith(b"HTTP/1.1 400 ")
        assert json.loads(body)["error"]["message"].startswith(reason)
        assert [e.fault for e in bridge.exchanges] == ["request"]
        assert bridge.stopped == "refused: 1 requests refused"


def test_a_request_whose_worst_case_cost_passes_the_budget_is_refused_unsent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """$1000 per million tokens either way: "hi" could cost at most (2 bytes + 16 + 32 + 100)
    tokens, $0.15, and is sent; 1000 bytes could cost $1.148, past the $0.988 left after it."""
    loopback_only(monkeypatch)
    prices = PriceTable({"m": Price(1000.0, 1000.0, 1000.0)})
    with StubServer(ok()) as stub:  # each reply: 10 prompt + 2 completion tokens, $0.012
        model = OpenAIModel("m", base_url=stub.url, max_retries=0, prices=prices)
        limits = BridgeLimits(cost_usd=1.0, max_completion_tokens=100)
        with Bridge(model, limits) as bridge:
            client = client_of(bridge)
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
            with pytest.raises(openai.RateLimitError) as refused:
                client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": "x" * 1000}]
                )
    assert len(stub.requests) == 1  # the second never left the bridge
    why = (
        "cost: this request could cost $1.1480 (1048 prompt tokens at most + 100 completion),"
        " $0.9880 of $1 left"
    )
    assert bridge.stopped == why and f"limit reached: {why}" in str(refused.value)
    assert bridge.exchanges[-1].fault == "limit" and bridge.cost_usd == pytest.approx(0.012)


def test_a_request_whose_worst_case_tokens_pass_the_budget_is_refused_unsent() -> None:
    with Bridge(Stub(), BridgeLimits(tokens=1000, max_completion_tokens=100)) as bridge:
        client = client_of(bridge)
        with pytest.raises(openai.RateLimitError, match="tokens: this request could take 1148"):
            client.chat.completions.create(
                model="m",
                messages=[{"role": "user", "content": "x" * 1000}],
                max_tokens=500,  # the bridge's cap, 100, is what would be sent
            )
        assert bridge.model.requests == []  # type: ignore[attr-defined]


def test_a_bug_of_the_bridges_own_is_one_line_not_a_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Broken:
        name = "broken"

        def complete(self, request: ModelRequest) -> Completion:
            raise RuntimeError("a model that breaks the seam's contract\nsecond line")

    with Bridge(Broken()) as bridge:  # type: ignore[arg-type]
        client = client_of(bridge)
        with pytest.raises(openai.InternalServerError) as broken:
            client.chat.completions.create(model="m", messages=GO)  # type: ignore[arg-type]
    why = "bridge fault: RuntimeError: a model that breaks the seam's contract second line"
    assert why in str(broken.value)
    (kept,) = bridge.exchanges
    assert (kept.error, kept.fault) == (why, "request")
    assert [r.getMessage() for r in caplog.records] == [f"{why} (item ?)"]
    assert all(r.exc_info is None for r in caplog.records)
