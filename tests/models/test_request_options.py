"""Session request settings at the model seam: what goes out, what comes back (logprobs), and
what a failed call leaves on record — against the loopback stub server."""

from __future__ import annotations

import pytest

from pytest_toolpolicy.models import ModelError, ModelRequest, OpenAIModel, Usage, load_prices
from pytest_toolpolicy.models.cache import request_key
from pytest_toolpolicy.models.request_options import (
    OptionedModel,
    RequestOptions,
    json_schema_format,
    with_options,
)
from pytest_toolpolicy.policy.parse import REPLY_SCHEMA

from .stub_server import Reply, StubServer, chat_body, loopback_only

KEY_ENV = "TOOLPOLICY_TEST_KEY"
REQUEST = ModelRequest(messages=({"role": "user", "content": "hi"},), max_completion_tokens=64)
FORMAT = json_schema_format("policy_reply", REPLY_SCHEMA)


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    loopback_only(monkeypatch)
    monkeypatch.setenv(KEY_ENV, "sk-test-0123456789")


def model_at(stub: StubServer) -> OpenAIModel:
    return OpenAIModel(
        "stub", base_url=stub.url, api_key_env=KEY_ENV, max_retries=0, prices=load_prices(env={})
    )


def test_unset_options_leave_the_request_and_its_cache_key_as_they_were() -> None:
    assert RequestOptions().apply(REQUEST) is REQUEST
    assert set(REQUEST.params()) == {"temperature", "max_completion_tokens"}
    inner = OpenAIModel("x", base_url="http://127.0.0.1:9/v1", prices=load_prices(env={}))
    assert with_options(inner, RequestOptions()) is inner


def test_set_options_change_the_request_and_its_key() -> None:
    options = RequestOptions(
        max_completion_tokens=512, seed=7, response_format=FORMAT, top_logprobs=3
    )
    sent = options.apply(REQUEST)
    assert sent.params() == {
        "temperature": 0.0,
        "max_completion_tokens": 512,
        "response_format": FORMAT,
        "seed": 7,
        "logprobs": True,
        "top_logprobs": 3,
    }
    assert sent.messages == REQUEST.messages
    assert request_key("m", sent)[0] != request_key("m", REQUEST)[0]


def test_the_options_reach_the_endpoint_and_logprobs_come_back_in_extra() -> None:
    logprobs = {
        "content": [
            {"token": '{"', "logprob": -0.01, "bytes": None, "top_logprobs": [
                {"token": '{"', "logprob": -0.01, "bytes": None},
                {"token": "{", "logprob": -4.6, "bytes": None},
            ]},
            {"token": "tool", "logprob": -0.2, "bytes": None, "top_logprobs": []},
        ]
    }  # fmt: skip
    body = chat_body('{"tool": "stop", "args": {}}', {"prompt_tokens": 5, "completion_tokens": 2})
    body["choices"][0]["logprobs"] = logprobs
    options = RequestOptions(seed=3, response_format=FORMAT, top_logprobs=2)
    with StubServer(Reply(body=body)) as stub:
        model = OptionedModel(model_at(stub), options)
        completion = model.complete(REQUEST)
    [sent] = stub.requests
    assert sent.body["response_format"] == FORMAT
    assert (sent.body["seed"], sent.body["logprobs"], sent.body["top_logprobs"]) == (3, True, 2)
    assert completion.extra["logprobs"] == [
        {"token": '{"', "logprob": -0.01, "top": [['{"', -0.01], ["{", -4.6]]},
        {"token": "tool", "logprob": -0.2, "top": []},
    ]
    assert model.name == "openai:stub"


def test_no_logprobs_in_the_reply_adds_none() -> None:
    with StubServer(Reply(body=chat_body("ok", {"prompt_tokens": 1, "completion_tokens": 1}))) as s:
        completion = model_at(s).complete(REQUEST)
    assert "logprobs" not in completion.extra


def test_logprobs_spelling_the_key_are_withheld() -> None:
    body = chat_body("fine", {"prompt_tokens": 1, "completion_tokens": 2})
    body["choices"][0]["logprobs"] = {
        "content": [
            {"token": "sk-test-01234", "logprob": -1.0, "top_logprobs": []},
            {"token": "56789", "logprob": -1.0, "top_logprobs": []},
        ]
    }
    with StubServer(Reply(body=body)) as stub:
        completion = model_at(stub).complete(REQUEST)
    assert "sk-test" not in str(completion.extra)
    assert completion.extra["logprobs"] == "withheld: held the API key"


def test_a_failed_call_keeps_the_usage_the_server_reported() -> None:
    body = {"object": "chat.completion", "choices": [], "usage": {
        "prompt_tokens": 40, "completion_tokens": 9}}  # fmt: skip
    with StubServer(Reply(body=body)) as stub, pytest.raises(ModelError) as caught:
        model_at(stub).complete(REQUEST)
    assert caught.value.usage == Usage(40, 9)
    record = caught.value.record()
    assert record["usage"]["total_tokens"] == 49 and record["cost_usd"] is None


def test_a_failed_call_without_usage_is_unknown_not_zero() -> None:
    failing = Reply(status=500, body={"error": "boom"})
    with StubServer(failing) as stub, pytest.raises(ModelError) as caught:
        model_at(stub).complete(REQUEST)
    assert caught.value.usage is None
    record = caught.value.record()
    assert record["usage"]["missing"] is True and record["error"] == str(caught.value)
