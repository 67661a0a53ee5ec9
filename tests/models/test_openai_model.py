from __future__ import annotations

import socket
import uuid
import warnings

import pytest

from pytest_toolpolicy.models import (
    ModelError,
    ModelRequest,
    OpenAIModel,
    Price,
    PriceTable,
    UnpricedWarning,
    Usage,
    load_prices,
)

from .stub_server import Reply, StubServer, chat_body, loopback_only, ok

KEY_ENV = "TOOLPOLICY_TEST_KEY"
FAST = {"retry-after-ms": "10"}  # the SDK waits what the server says instead of its backoff
REQUEST = ModelRequest(
    messages=({"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}),
    max_completion_tokens=64,
)


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    loopback_only(monkeypatch)
    monkeypatch.setenv(KEY_ENV, "sk-test-0123456789")


def model_at(stub: StubServer, name: str = "deepseek-v4-pro", **kwargs: object) -> OpenAIModel:
    options: dict = {"api_key_env": KEY_ENV, "max_retries": 2, "prices": load_prices(env={})}
    return OpenAIModel(name, base_url=stub.url, **{**options, **kwargs})


def test_a_reply_carries_text_usage_cost_and_latency() -> None:
    usage = {
        "prompt_tokens": 2000,
        "completion_tokens": 100,
        "prompt_cache_hit_tokens": 1500,
        "prompt_cache_miss_tokens": 500,
    }
    with StubServer(ok("hello", usage)) as stub:
        completion = model_at(stub).complete(REQUEST)
    assert completion.text == "hello"
    assert completion.usage == Usage(2000, 100, 1500)
    assert completion.cost_usd == pytest.approx((500 * 0.435 + 1500 * 0.003625 + 100 * 0.87) / 1e6)
    assert completion.latency_s > 0 and completion.model == "openai:deepseek-v4-pro"
    assert completion.extra == {"finish_reason": "stop", "served_model": "stub-model"}
    [sent] = stub.requests
    assert sent.path == "/v1/chat/completions"
    assert sent.body["model"] == "deepseek-v4-pro"
    assert sent.body["messages"] == [dict(m) for m in REQUEST.messages]
    assert (
        sent.body["temperature"],
        sent.body["max_completion_tokens"],
        sent.body["max_tokens"],
    ) == (0.0, 64, 64)


def test_openai_cached_tokens_are_priced_at_the_cached_rate() -> None:
    usage = {
        "prompt_tokens": 4000,
        "completion_tokens": 50,
        "prompt_tokens_details": {"cached_tokens": 3072},
    }
    with StubServer(ok("x", usage)) as stub:
        completion = model_at(stub, "gpt-4o-mini").complete(REQUEST)
    assert completion.usage.cached_prompt_tokens == 3072
    assert completion.cost_usd == pytest.approx((928 * 0.15 + 3072 * 0.075 + 50 * 0.60) / 1e6)


def test_rate_limited_then_answered() -> None:
    with StubServer(
        Reply(429, {"error": {"message": "slow down"}}, headers=FAST), ok("late")
    ) as stub:
        assert model_at(stub).complete(REQUEST).text == "late"
    assert [r.headers["x-stainless-retry-count"] for r in stub.requests] == ["0", "1"]


def test_rate_limited_until_retries_run_out() -> None:
    stub = StubServer(Reply(429, {"error": {"message": "quota"}}, headers=FAST))
    with stub, pytest.raises(ModelError, match=r"rate limited \(429\) after 2 retries: quota"):
        model_at(stub).complete(REQUEST)
    assert len(stub.requests) == 3


def test_server_errors_until_retries_run_out() -> None:
    stub = StubServer(Reply(500, {"error": {"message": "overloaded"}}, headers=FAST))
    with stub, pytest.raises(ModelError) as raised:
        model_at(stub, max_retries=3).complete(REQUEST)
    assert len(stub.requests) == 4
    assert (
        str(raised.value)
        == f"openai:deepseek-v4-pro at {stub.url}: server error 500 after 3 retries: overloaded"
    )


def test_a_hung_server_ends_the_call_at_its_deadline_without_a_retry() -> None:
    # The timeout bounds the whole call: no retry can start once it has passed.
    stub = StubServer(Reply(delay=30))
    expected = r"exceeded its 0.5s deadline \(waiting for the response, after 0 retries\)"
    with stub, pytest.raises(ModelError, match=expected):
        model_at(stub, timeout=0.5, max_retries=1).complete(REQUEST)
    assert len(stub.requests) == 1


def test_a_refused_connection_is_named() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = OpenAIModel(
        "m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0, prices=load_prices(env={})
    )
    with pytest.raises(ModelError, match=r"connection refused after 0 retries"):
        model.complete(REQUEST)


@pytest.mark.parametrize(
    ("reply", "complaint"),
    [
        (Reply(raw=b'{"choices": [{"mess'), "malformed response: the body is not JSON"),
        (Reply(body={"object": "chat.completion"}), "malformed response: no choices"),
        (
            Reply(body={"choices": [{"index": 0}]}),
            "malformed response: the first choice has no message",
        ),
        (
            Reply(raw=b"<html>gateway</html>", headers={"content-type": "text/html"}),
            "malformed response: not a chat completion: '<html>gateway</html>'",
        ),
    ],
)
def test_a_malformed_body_is_a_model_error(reply: Reply, complaint: str) -> None:
    with StubServer(reply) as stub, pytest.raises(ModelError, match=complaint):
        model_at(stub).complete(REQUEST)


def test_a_client_error_is_not_retried() -> None:
    stub = StubServer(Reply(400, {"error": {"message": "context too long"}}, headers=FAST))
    with stub, pytest.raises(ModelError, match=r"request rejected \(400\): context too long"):
        model_at(stub).complete(REQUEST)
    assert len(stub.requests) == 1


@pytest.mark.parametrize(
    ("status", "blame"),
    [
        (400, "request"),  # a parameter out of range, a prompt past the context
        (413, "request"),
        (422, "request"),
        (401, "endpoint"),  # the key: the session's, not the request's
        (403, "endpoint"),
        (404, "endpoint"),  # the model or the path the session named
        (429, "endpoint"),
        (500, "endpoint"),
        (503, "endpoint"),
    ],
)
def test_a_failure_says_whose_it_is(status: int, blame: str) -> None:
    stub = StubServer(Reply(status, {"error": {"message": "no"}}, headers=FAST))
    with stub, pytest.raises(ModelError) as raised:
        model_at(stub, max_retries=0).complete(REQUEST)
    assert raised.value.blame == blame
    record = raised.value.record()
    # a refused request was answered before any generation: known to cost nothing
    refused = blame == "request"
    assert (record["cost_usd"], record["usage"]["missing"]) == (
        (0.0, False) if refused else (None, True)
    )


def test_a_malformed_reply_and_a_timeout_are_the_endpoints() -> None:
    stub = StubServer(Reply(body={"object": "chat.completion"}))
    with stub, pytest.raises(ModelError) as malformed:
        model_at(stub).complete(REQUEST)
    stub = StubServer(Reply(delay=30))
    with stub, pytest.raises(ModelError) as late:
        model_at(stub, timeout=0.3, max_retries=0).complete(REQUEST)
    assert (malformed.value.blame, late.value.blame) == ("endpoint", "endpoint")


def test_the_model_prices_a_usage_before_the_call() -> None:
    with StubServer() as stub:
        model = model_at(stub, "gpt-4o-mini")
        assert model.cost_of(Usage(1_000_000, 1_000_000)) == pytest.approx(0.15 + 0.60)
        with pytest.warns(UnpricedWarning, match="no price for model 'no-such-model'"):
            assert model_at(stub, "no-such-model").cost_of(Usage(10, 10)) is None
    assert stub.requests == []


STRICT_SERVERS = {
    "openai-style 400": Reply(
        400, {"error": {"message": "Unrecognized request argument supplied: max_completion_tokens"}}
    ),
    "pydantic-style 422": Reply(
        422,
        {
            "detail": [
                {
                    "type": "extra_forbidden",
                    "loc": ["body", "max_completion_tokens"],
                    "msg": "Extra inputs are not permitted",
                }
            ]
        },
    ),
}


@pytest.mark.parametrize("refusal", STRICT_SERVERS.values(), ids=STRICT_SERVERS.keys())
def test_a_refused_token_limit_name_is_dropped_once_and_for_good(refusal: Reply) -> None:
    with StubServer(refusal, ok("one"), ok("two")) as stub:
        model = model_at(stub)
        assert [model.complete(REQUEST).text for _ in range(2)] == ["one", "two"]
    bodies = [r.body for r in stub.requests]
    assert "max_completion_tokens" in bodies[0]
    assert all("max_completion_tokens" not in b and b["max_tokens"] == 64 for b in bodies[1:])


def test_openai_itself_gets_only_max_completion_tokens_and_its_refusal_is_read_right() -> None:
    refusal = Reply(
        400,
        {
            "error": {
                "message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
                "param": "max_tokens",
            }
        },
    )
    with StubServer(refusal, ok()) as stub:
        model_at(stub).complete(REQUEST)
    retried = stub.requests[1].body
    assert "max_tokens" not in retried and retried["max_completion_tokens"] == 64
    assert OpenAIModel(
        "gpt-4o", base_url="https://api.openai.com/v1", prices=load_prices(env={})
    )._limits == ("max_completion_tokens",)


def test_no_usage_in_the_reply_means_unknown_cost_with_one_warning() -> None:
    name = f"priced-{uuid.uuid4().hex[:8]}"
    with StubServer(Reply(body=chat_body("no usage"))) as stub:
        model = model_at(stub, name, prices=PriceTable({name: Price(1.0, 0.1, 2.0)}))
        with pytest.warns(UnpricedWarning, match="reported no token usage"):
            completion = model.complete(REQUEST)
    assert completion.usage.missing and completion.cost_usd is None


def test_an_unpriced_model_warns_once_and_costs_none() -> None:
    name = f"local-{uuid.uuid4().hex[:8]}"
    with StubServer(ok()) as stub, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = model_at(stub, name)
        costs = [model.complete(REQUEST).cost_usd for _ in range(3)]
    assert costs == [None, None, None]
    messages = [str(w.message) for w in caught if issubclass(w.category, UnpricedWarning)]
    assert len(messages) == 1 and name in messages[0]


def test_a_missing_key_for_a_remote_endpoint_names_the_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    model = OpenAIModel(
        "deepseek-v4-pro",
        base_url="https://api.deepseek.invalid/v1",
        api_key_env="DEEPSEEK_API_KEY",
        prices=load_prices(env={}),
    )
    with pytest.raises(
        ModelError, match="no API key; set the environment variable DEEPSEEK_API_KEY"
    ):
        model.complete(REQUEST)


def test_a_loopback_server_needs_no_key_and_the_base_url_may_come_from_the_env(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with StubServer(ok("local")) as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.url.replace("127.0.0.1", "localhost"))
        model = OpenAIModel("llama", prices=PriceTable({"llama": Price(0, 0, 0)}))
        assert model.is_local
        completion = model.complete(REQUEST)
    assert (completion.text, completion.cost_usd) == ("local", 0.0)
    assert stub.requests[0].headers["authorization"] == "Bearer no-key"


@pytest.mark.parametrize(
    ("usage", "shown"),
    [
        ({"prompt_tokens": -5, "completion_tokens": 2}, "usage.prompt_tokens is -5"),
        (
            {"prompt_tokens": 10, "completion_tokens": float("nan")},
            "usage.completion_tokens is nan",
        ),
        ({"prompt_tokens": 1e300, "completion_tokens": 2}, "usage.prompt_tokens is 1e+300"),
        ({"prompt_tokens": "many", "completion_tokens": 2}, "usage.prompt_tokens is 'many'"),
        (
            {
                "prompt_tokens": 10,
                "completion_tokens": 2,
                "prompt_tokens_details": {"cached_tokens": -1},
            },
            "usage.prompt_tokens_details.cached_tokens is -1",
        ),
    ],
    ids=["negative", "nan", "1e300", "string", "cached"],
)
def test_absurd_usage_is_a_model_error_never_a_cost(usage: dict, shown: str) -> None:
    # Pricing it would give $inf or a negative spend: the endpoint is misbehaving, so say so.
    with StubServer(ok("fine", usage)) as stub, pytest.raises(ModelError) as raised:
        model_at(stub).complete(REQUEST)
    assert f"malformed response: {shown}, not a token count" in str(raised.value)
    assert len(stub.requests) == 1
