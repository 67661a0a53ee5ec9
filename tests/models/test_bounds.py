"""A model call is bounded in time (one deadline for connect, reads and retries together) and in
size (each response body), against real stub servers on 127.0.0.1."""

from __future__ import annotations

import gzip
import inspect
import json
import os
import re
import subprocess
import sys
import time

import openai
import pytest

from pytest_toolpolicy.models import ModelError, ModelRequest, OpenAIModel, Price, PriceTable
from pytest_toolpolicy.models.http_bounds import (
    BoundedHTTPClient,
    BoundedOpenAI,
    BoundedTransport,
    _DeadlineBackend,
)

from .stub_server import Reply, StubServer, chat_body, loopback_only, ok

REQUEST = ModelRequest(messages=({"role": "user", "content": "hi"},))
FREE = PriceTable({"m": Price(0, 0, 0)})
# The bounds are functional, not benchmarks: generous slack for a loaded 2-core machine.
SLACK_S = 1.5


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    loopback_only(monkeypatch)
    monkeypatch.delenv("TOOLPOLICY_LIMITS", raising=False)


def model_at(stub: StubServer, timeout: float = 2, max_retries: int = 0) -> OpenAIModel:
    return OpenAIModel(
        "m", base_url=stub.url, timeout=timeout, max_retries=max_retries, prices=FREE
    )


def timed_failure(model: OpenAIModel) -> tuple[float, str]:
    started = time.monotonic()
    with pytest.raises(ModelError) as raised:
        model.complete(REQUEST)
    return time.monotonic() - started, str(raised.value)


# --- the deadline -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "where"),
    [
        (Reply(body=chat_body(), drip=1.0), "reading the response body, "),
        (Reply(body=chat_body(), drip=1.0, drip_head=True), "waiting for the response, "),
        (Reply(delay=60), "waiting for the response, "),
    ],
    ids=["body drips 1 byte/s", "head drips 1 byte/s", "accepts, never answers"],
)
def test_a_slow_server_ends_the_call_at_its_deadline(reply: Reply, where: str) -> None:
    with StubServer(reply) as stub:
        elapsed, message = timed_failure(model_at(stub, timeout=2, max_retries=3))
    assert 1.9 <= elapsed < 2 + SLACK_S, elapsed
    # On a loaded machine the dripping body's head can itself arrive after the deadline: the
    # call then ends while still waiting for the response, which is no less the deadline.
    stages = [where, "waiting for the response, "] if "body" in where else [where]
    assert any("model call exceeded its 2s deadline (" + stage in message for stage in stages)
    assert message.endswith("after 0 retries)")
    assert len(stub.requests) == 1  # no retry starts after the deadline


def test_the_deadline_bounds_all_retries_together() -> None:
    # Each attempt takes 0.8 s and fails; retries are immediate: only the deadline stops them.
    slow_500 = Reply(
        500, {"error": {"message": "busy"}}, headers={"retry-after-ms": "10"}, delay=0.8
    )
    with StubServer(slow_500) as stub:
        elapsed, message = timed_failure(model_at(stub, timeout=2, max_retries=10))
    assert 1.9 <= elapsed < 2 + SLACK_S, elapsed
    # 0.8 s attempts fit about 2 retries in 2 s; a loaded machine fits fewer, never the 10 allowed.
    retries = re.search(
        r"exceeded its 2s deadline \(waiting for the response, after (\d+) retr", message
    )
    assert retries is not None, message
    assert 1 <= int(retries.group(1)) <= 2 and len(stub.requests) == int(retries.group(1)) + 1


def test_backoff_never_sleeps_past_the_deadline() -> None:
    # The SDK's backoff (0.5 s, 1 s, 2 s, ... with jitter) would go on for minutes.
    with StubServer(Reply(503, {"error": {"message": "down"}})) as stub:
        elapsed, message = timed_failure(model_at(stub, timeout=2, max_retries=10))
    assert elapsed < 2 + SLACK_S, elapsed
    assert "2s deadline (retry " in message and "would start after it; last: HTTP 503" in message
    assert 2 <= len(stub.requests) <= 4


def test_a_retry_after_beyond_the_deadline_ends_the_call_at_once() -> None:
    limited = Reply(429, {"error": {"message": "quota"}}, headers={"retry-after": "30"})
    with StubServer(limited) as stub:
        elapsed, message = timed_failure(model_at(stub, timeout=3, max_retries=4))
    assert elapsed < 1.5, elapsed
    assert message.endswith(
        "model call exceeded its 3s deadline (retry 1 would start after it; last: HTTP 429,"
        " after 0 retries)"
    )
    assert len(stub.requests) == 1


def test_retries_that_fit_in_the_deadline_still_happen() -> None:
    fast_429 = Reply(429, {"error": {"message": "slow down"}}, headers={"retry-after-ms": "10"})
    with StubServer(fast_429, ok("late")) as stub:
        assert model_at(stub, timeout=5, max_retries=2).complete(REQUEST).text == "late"
    assert len(stub.requests) == 2


# --- the size cap -------------------------------------------------------------------------


def test_a_body_over_the_cap_is_refused_and_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLPOLICY_LIMITS", "response_mb=0.01")
    with StubServer(ok("x" * 20_000)) as stub:
        elapsed, message = timed_failure(model_at(stub, max_retries=3))
    assert message.endswith(": model response exceeded 0.01 MiB (limit response_mb)")
    assert len(stub.requests) == 1


def test_an_announced_huge_body_is_refused_before_it_is_read() -> None:
    with StubServer(Reply(size=150 << 20)) as stub:
        elapsed, message = timed_failure(model_at(stub, timeout=30))
    assert elapsed < 5, elapsed
    assert "model response exceeded 4 MiB (limit response_mb)" in message


def test_an_endless_error_body_is_refused_too() -> None:
    with StubServer(Reply(400, size=-1, announce=False)) as stub:
        _, message = timed_failure(model_at(stub, timeout=30))
    assert "model response exceeded 4 MiB (limit response_mb)" in message


def test_a_body_under_the_cap_passes_compressed_or_not() -> None:
    body = json.dumps(chat_body("y" * 100_000, {"prompt_tokens": 1, "completion_tokens": 1}))
    zipped = Reply(raw=gzip.compress(body.encode()), headers={"content-encoding": "gzip"})
    with StubServer(Reply(raw=body.encode()), zipped) as stub:
        model = model_at(stub)
        assert [len(model.complete(REQUEST).text) for _ in range(2)] == [100_000, 100_000]
    assert stub.requests[1].headers["accept-encoding"] == "gzip, deflate"


def test_an_encoding_not_asked_for_is_refused() -> None:
    with StubServer(Reply(raw=b"\x00" * 10, headers={"content-encoding": "br"})) as stub:
        _, message = timed_failure(model_at(stub))
    assert "model response has content-encoding 'br', not asked for" in message


_PROBE = """
import resource, sys, tracemalloc
from pytest_toolpolicy.models import ModelError, ModelRequest, OpenAIModel, Price, PriceTable

model = OpenAIModel("m", base_url=sys.argv[1], timeout=60, max_retries=0,
                    prices=PriceTable({"m": Price(0, 0, 0)}))
request = ModelRequest(messages=({"role": "user", "content": "hi"},))
model.complete(request)  # imports, connection pool, parsing: all warm before measuring
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
tracemalloc.start()
try:
    model.complete(request)
    outcome = "answered"
except ModelError as exc:
    outcome = str(exc)
traced = tracemalloc.get_traced_memory()[1]
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print((after - before) // 1024, traced >> 20, outcome, sep="\\n")
"""


def _bomb() -> bytes:
    # 150 MB of JSON whitespace, about 150 KB compressed: the wire bytes alone are under the cap.
    out = gzip.compress(b" " * (150 << 20), compresslevel=9)
    assert len(out) < 1 << 20
    return out


@pytest.mark.parametrize(
    "reply",
    [
        Reply(size=150 << 20, announce=False),
        Reply(size=-1, announce=False),
        "gzip bomb",
    ],
    ids=["150 MB unannounced", "endless", "150 MB gzip bomb"],
)
def test_a_huge_body_is_refused_with_little_memory(reply: Reply | str) -> None:
    if reply == "gzip bomb":
        reply = Reply(raw=_bomb(), headers={"content-encoding": "gzip"})
    assert isinstance(reply, Reply)
    env = {k: v for k, v in os.environ.items() if k != "TOOLPOLICY_LIMITS"}
    with StubServer(ok(), reply) as stub:
        done = subprocess.run(
            [sys.executable, "-c", _PROBE, stub.url],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            check=True,
        )
    # Peak RSS growth over the warm process, and the peak of what Python allocated during the
    # call; without the cap the 150 MB body shows as about 300 MB of either.
    growth_mb, traced_mb, outcome = done.stdout.strip().split("\n", 2)
    print(f"peak RSS growth {growth_mb} MB, traced peak {traced_mb} MB: {outcome}")
    assert "model response exceeded 4 MiB (limit response_mb)" in outcome
    assert int(growth_mb) < 40 and int(traced_mb) < 40


# --- the seams these bounds sit on --------------------------------------------------------


def test_the_sdk_still_has_the_retry_sleep_this_overrides() -> None:
    ours = inspect.signature(BoundedOpenAI._sleep_for_retry).parameters
    theirs = inspect.signature(openai.OpenAI._sleep_for_retry).parameters
    assert list(ours) == list(theirs)


def test_every_route_of_the_client_is_bounded_proxies_included(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    client = BoundedHTTPClient()
    try:
        transports = [client._transport, *client._mounts.values()]
        assert len(transports) >= 2
        for transport in transports:
            assert isinstance(transport, BoundedTransport)
            assert isinstance(transport._pool._network_backend, _DeadlineBackend)
    finally:
        client.close()


def test_a_bound_message_never_carries_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    # The one bound message with text from the server: the content-encoding it names.
    key = "sk-bounds-secret-0123456789"
    monkeypatch.setenv("TOOLPOLICY_TEST_KEY", key)
    echo = Reply(raw=b"{}", headers={"content-encoding": f"x-{key}"})
    with StubServer(echo) as stub:
        model = OpenAIModel(
            "m", base_url=stub.url, api_key_env="TOOLPOLICY_TEST_KEY", max_retries=0, prices=FREE
        )
        _, message = timed_failure(model)
    assert stub.requests[0].headers["authorization"] == f"Bearer {key}"
    assert "content-encoding" in message and key not in message
