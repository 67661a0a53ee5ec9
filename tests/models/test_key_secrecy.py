"""The API key goes to the endpoint in the Authorization header and nowhere else: not into an
exception, a log line, a completion, a repr or a warning, even when the server echoes it back."""

from __future__ import annotations

import json
import logging
import socket
import traceback
import uuid
import warnings

import pytest

from pytest_toolpolicy.models import ModelError, ModelRequest, OpenAIModel, build_model
from pytest_toolpolicy.models.openai_errors import scrub

from .stub_server import Reply, StubServer, chat_body, loopback_only

KEY_ENV = "TOOLPOLICY_SECRECY_KEY"
SECRET = f"sk-secret-{uuid.uuid4().hex}"
REQUEST = ModelRequest(messages=({"role": "user", "content": "hi"},))
FAST = {"retry-after-ms": "10"}
ECHO = f"you sent Authorization: Bearer {SECRET} (key {SECRET})"

# Each failure, and whether the server's text (key redacted) belongs in the error message.
FAILURES = {
    "server error echoing the key": (Reply(500, {"error": {"message": ECHO}}, headers=FAST), True),
    "rate limit echoing the key": (Reply(429, {"error": {"message": ECHO}}, headers=FAST), True),
    "unauthorized echoing the key": (
        Reply(401, {"error": {"message": f"Incorrect API key provided: {SECRET}"}}),
        True,
    ),
    "bad request as plain text": (
        Reply(400, raw=ECHO.encode(), headers={"content-type": "text/plain"}),
        True,
    ),
    "reply as plain text": (Reply(raw=ECHO.encode(), headers={"content-type": "text/plain"}), True),
    "body not JSON": (Reply(raw=f'{{"error": "{SECRET}'.encode()), False),
    "no choices, key in body": (Reply(body={"detail": ECHO}), False),
    "hung": (Reply(delay=30), False),
}


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    loopback_only(monkeypatch)
    monkeypatch.setenv(KEY_ENV, SECRET)
    caplog.set_level(logging.DEBUG)  # the SDK's and the HTTP stack's debug lines too


def model_at(url: str) -> OpenAIModel:
    model = build_model(
        "openai:gpt-4o-mini", base_url=url, api_key_env=KEY_ENV, timeout=0.5, max_retries=1
    )
    assert isinstance(model, OpenAIModel)
    return model


def assert_no_key(*texts: str) -> None:
    # A clipped message could keep most of the key: look for any 12 characters of it.
    pieces = {SECRET[i : i + 12] for i in range(len("sk-secret-"), len(SECRET) - 11)}
    for text in texts:
        assert not any(piece in text for piece in pieces), text


@pytest.mark.parametrize(("reply", "quoted"), FAILURES.values(), ids=FAILURES.keys())
def test_no_failure_text_carries_the_key(
    reply: Reply, quoted: bool, caplog: pytest.LogCaptureFixture
) -> None:
    with StubServer(reply) as stub, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = model_at(stub.url)
        with pytest.raises(ModelError) as raised:
            model.complete(REQUEST)
    error = raised.value
    assert (
        error.__cause__ is None and error.__context__ is None
    )  # the SDK's exception holds the request
    assert ("[REDACTED]" in str(error)) is quoted
    assert_no_key(
        str(error),
        repr(error),
        "".join(traceback.format_exception(error)),
        caplog.text,
        repr(model),
        *(str(w.message) for w in caught),
    )
    assert stub.requests, "the call reached the stub"
    assert {r.headers["authorization"] for r in stub.requests} == {f"Bearer {SECRET}"}


def test_a_refused_connection_does_not_carry_the_key(caplog: pytest.LogCaptureFixture) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ModelError) as raised:
        model_at(f"http://127.0.0.1:{port}/v1").complete(REQUEST)
    assert_no_key(str(raised.value), "".join(traceback.format_exception(raised.value)), caplog.text)


def test_a_completion_and_its_record_do_not_carry_the_key(caplog: pytest.LogCaptureFixture) -> None:
    usage = {"prompt_tokens": 10, "completion_tokens": 3}
    body = chat_body(f"echo: {SECRET}", usage=usage, model=f"served-{SECRET}")
    with StubServer(Reply(body=body)) as stub:
        model = model_at(stub.url)
        completion = model.complete(REQUEST)
    assert completion.text == "echo: [REDACTED]"
    assert_no_key(
        repr(completion),
        json.dumps(completion.record()),
        repr(model),
        str(vars(model)),
        caplog.text,
    )
    assert stub.requests[0].headers["authorization"] == f"Bearer {SECRET}"


def test_scrub_removes_the_key_and_any_bearer_token_but_not_a_placeholder() -> None:
    assert scrub(f"key={SECRET}; Authorization: Bearer other-token", SECRET) == (
        "key=[REDACTED]; Authorization: Bearer [REDACTED]"
    )
    assert (
        scrub("ollama and no-key are placeholders", "ollama")
        == "ollama and no-key are placeholders"
    )
