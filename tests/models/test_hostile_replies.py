"""Whatever an endpoint sends, however deeply nested, ends as a ``model_error`` naming what was
wrong, or, when only the reply text is hostile, as the arm's no-op turn with its reason: never a
traceback. Against stub servers on 127.0.0.1, through the real client."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_toolpolicy import jsonsafe
from pytest_toolpolicy.cli import HARNESS_FAULT_EXIT
from pytest_toolpolicy.models import ModelError, ModelRequest, OpenAIModel, Price, PriceTable
from pytest_toolpolicy.policy.parse import ParsedCall, ParsedNoop, parse_reply
from pytest_toolpolicy.types import ToolCall, load_trajectories

from .stub_server import Reply, StubServer, chat_body, loopback_only, ok

REQUEST = ModelRequest(messages=({"role": "user", "content": "hi"},))
FREE = PriceTable({"m": Price(0, 0, 0)})
LEVELS = 200_000
TOO_DEEP = f"model response is JSON nested deeper than {jsonsafe.MAX_DEPTH} levels"
ROOT = Path(__file__).parents[2]


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    loopback_only(monkeypatch)
    monkeypatch.delenv("TOOLPOLICY_LIMITS", raising=False)


def with_tool_calls(levels: int) -> bytes:
    """A chat completion whose message's ``tool_calls`` is ``levels - 4`` lists deep: the body
    nests ``levels`` deep in all (the object, choices, the choice, the message)."""
    body = chat_body("hi", {"prompt_tokens": 1, "completion_tokens": 1})
    body["choices"][0]["message"]["tool_calls"] = "@"
    inner = levels - 4
    return json.dumps(body).replace('"@"', "[" * inner + "]" * inner).encode()


def model_at(stub: StubServer, max_retries: int = 0) -> OpenAIModel:
    return OpenAIModel("m", base_url=stub.url, timeout=10, max_retries=max_retries, prices=FREE)


def failure(reply: Reply, max_retries: int = 0) -> tuple[str, int]:
    with StubServer(reply) as stub, pytest.raises(ModelError) as raised:
        model_at(stub, max_retries).complete(REQUEST)
    return str(raised.value), len(stub.requests)


# --- the body: decoded only within the nesting bound -------------------------------------


@pytest.mark.parametrize(
    "headers",
    [{}, {"content-type": "text/plain"}, {"content-encoding": "gzip"}],
    ids=["json", "not announced as json", "gzip"],
)
def test_a_body_nested_200000_deep_is_a_model_error_naming_the_bound(
    headers: dict[str, str],
) -> None:
    raw = with_tool_calls(LEVELS)
    if headers.get("content-encoding") == "gzip":
        raw = gzip.compress(raw)
    message, requests = failure(Reply(raw=raw, headers=headers), max_retries=3)
    assert message.endswith(f"/v1: {TOO_DEEP}"), message
    assert requests == 1  # not a transport failure: never retried


def test_the_bound_refuses_one_level_more_and_passes_the_bound_itself() -> None:
    message, _ = failure(Reply(raw=with_tool_calls(jsonsafe.MAX_DEPTH + 1)))
    assert message.endswith(TOO_DEEP)
    with StubServer(Reply(raw=with_tool_calls(jsonsafe.MAX_DEPTH))) as stub:
        assert model_at(stub).complete(REQUEST).text == "hi"


@pytest.mark.parametrize(
    ("status", "reason"), [(400, "request rejected (400): "), (500, "server error 500 after 0")]
)
def test_an_error_body_nested_200000_deep_is_the_status_error(status: int, reason: str) -> None:
    deep = b'{"error": {"message": ' + b"[" * LEVELS + b"]" * LEVELS + b"}}"
    message, _ = failure(Reply(status, raw=deep))
    assert f"/v1: {reason}" in message


# --- the reply text: each arm's parser, served through the client ------------------------


def served(text: str) -> str:
    with StubServer(ok(text)) as stub:
        return model_at(stub).complete(REQUEST).text


DEEP_CALL = '{"tool": "read_entity", "args": {"selector": ' + "[" * LEVELS + "]" * LEVELS + "}}"


def test_deep_json_inside_the_content_string_is_the_policy_s_noop() -> None:
    # Valid JSON four levels deep as a body: the 200,000 levels are inside the content string.
    assert jsonsafe.depth(json.dumps(chat_body(DEEP_CALL))) == 4
    text = served(DEEP_CALL)
    assert text == DEEP_CALL
    assert parse_reply(text) == ParsedNoop(
        f"reply is nested deeper than {jsonsafe.MAX_DEPTH} levels"
    )


SPACES = " " * 1_000_000
MEGABYTE_REPLIES: list[tuple[str, Any]] = [
    ("```\n" + SPACES + "x\n```", ParsedNoop("reply is not JSON: Expecting value (char 0)")),
    ("```\n" + SPACES + '{"tool": "search_code"}\n```', ParsedCall(ToolCall("search_code", {}))),
    ('{"tool": "search_code"}' + SPACES + '{"tool": "stop"}', "deferred"),
    ('"' + '\\"' * 500_000 + '"', ParsedNoop("reply is not a JSON object: got string")),
    ("[" * 1_000_000, ParsedNoop(f"reply is nested deeper than {jsonsafe.MAX_DEPTH} levels")),
    ("[" + ",".join(['{"tool": "search_code"}'] * 40_000) + "]", "deferred"),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    MEGABYTE_REPLIES,
    ids=["fenced spaces", "fenced call", "spaced calls", "escaped quotes", "brackets", "calls"],
)
def test_a_megabyte_reply_is_parsed_by_the_policy_or_refused_with_its_reason(
    text: str, expected: Any
) -> None:
    assert len(text) >= 900_000
    parsed = parse_reply(served(text))
    if expected == "deferred":  # several calls: the first runs, the rest are recorded
        assert isinstance(parsed, ParsedCall) and parsed.call == ToolCall("search_code", {})
        assert parsed.deferred and len(parsed.deferred) == text.count('"tool"') - 1
    else:
        assert parsed == expected


# --- end to end: the user's commands --------------------------------------------------------


def toolpolicy(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "TOOLPOLICY_LIMITS"}
    return subprocess.run(
        [sys.executable, "-m", "pytest_toolpolicy.cli", *argv],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=ROOT,
    )


@pytest.fixture(scope="module")
def deep_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path, str]:  # fmt: skip
    """``toolpolicy run`` of the policy arm against an endpoint answering 200,000 levels deep."""
    out = tmp_path_factory.mktemp("run") / "traj.jsonl"
    env_patch = pytest.MonkeyPatch()
    loopback_only(env_patch)
    try:
        with StubServer(Reply(raw=with_tool_calls(LEVELS))) as stub:
            done = toolpolicy(
                "run", "--instance", "bundled__memstore-1", "--arm", "policy",
                "--model", "openai:x", "--base-url", stub.url, "--out", str(out),
            )  # fmt: skip
    finally:
        env_patch.undo()
    return done, out, stub.url


def test_toolpolicy_run_against_a_deep_reply_writes_a_model_error_trajectory(
    deep_run: tuple[subprocess.CompletedProcess[str], Path, str],
) -> None:
    done, out, url = deep_run
    assert "Traceback" not in done.stderr and "RecursionError" not in done.stderr
    assert done.returncode != HARNESS_FAULT_EXIT
    (traj,) = load_trajectories(out)
    assert traj.outcome.outcome == "model_error"
    assert traj.outcome.detail["reason"] == f"openai:x at {url}: {TOO_DEEP}"
    assert len(traj.turns) == 1 and traj.turns[0].completion["error"].endswith(TOO_DEEP)
    assert f"trajectory: {out}" in done.stdout


def test_toolpolicy_run_against_a_deep_reply_exits_1_with_one_model_error_line(
    deep_run: tuple[subprocess.CompletedProcess[str], Path, str],
) -> None:
    done, _, url = deep_run
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == f"toolpolicy: model_error: openai:x at {url}: {TOO_DEEP}"


def test_toolpolicy_complete_against_a_deep_reply_prints_one_model_error_line() -> None:
    with StubServer(Reply(raw=with_tool_calls(LEVELS))) as stub:
        done = toolpolicy("complete", "--model", "openai:x", "--base-url", stub.url, "hi")
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == f"toolpolicy: model_error: openai:x at {stub.url}: {TOO_DEEP}\n"
