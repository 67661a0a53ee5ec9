"""The baseline's reply parser on hostile replies: each one is a format error with its reason,
never an exception, and the loop goes on; served by a real endpoint on 127.0.0.1 to the loop."""

from __future__ import annotations

import json

import pytest

from pytest_toolpolicy import jsonsafe
from pytest_toolpolicy.current import CurrentLoop
from pytest_toolpolicy.current.prompt import parse_reply
from pytest_toolpolicy.models import ModelRequest, OpenAIModel, Price, PriceTable
from pytest_toolpolicy.policy.loop import Task
from pytest_toolpolicy.primitives import Toolbox
from pytest_toolpolicy.types import ToolCall

from ..models.stub_server import StubServer, loopback_only, ok

FREE = PriceTable({"m": Price(0, 0, 0)})
REQUEST = ModelRequest(messages=({"role": "user", "content": "hi"},))
TOO_DEEP = f"the reply is nested deeper than {jsonsafe.MAX_DEPTH} levels"
DEEP = "[" * 200_000 + "]" * 200_000
BASH = {"tool": "bash", "args": {"command": "true"}}


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    loopback_only(monkeypatch)
    monkeypatch.delenv("TOOLPOLICY_LIMITS", raising=False)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (DEEP, TOO_DEEP),
        ('{"tool": "bash", "args": {"command": ' + DEEP + "}}", TOO_DEEP),
        ("```json\n" + DEEP + "\n```", TOO_DEEP),
        ("[" * 200_000, TOO_DEEP),
        (
            '{"tool": "bash", "args": {"timeout": ' + "9" * 5000 + "}}",
            "the reply is not valid JSON (Exceeds the limit (4300 digits) for integer string"
            " conversion: value has 5000 di)",
        ),
    ],
    ids=["bare", "in the args", "fenced", "unclosed", "5000 digits"],
)
def test_a_hostile_reply_is_a_format_error_with_its_reason(text: str, reason: str) -> None:
    assert parse_reply(text) == ([], reason)


def test_deep_brackets_inside_a_string_are_text() -> None:
    calls, error = parse_reply(json.dumps({"tool": "bash", "args": {"command": DEEP}}))
    assert error is None and calls == [ToolCall("bash", {"command": DEEP})]


@pytest.mark.parametrize(
    ("text", "noop"),
    [
        ('{"tool": "bash", "args": {"command": ' + DEEP + "}}", TOO_DEEP),
        ("```\n" + " " * 1_000_000 + "x\n```", "the reply is not valid JSON (Expecting value at line 1)"),
        ('"' + '\\"' * 500_000 + '"', 'call 1 is not an object with a string "tool"'),
        ("[" * 1_000_000, TOO_DEEP),
    ],
    ids=["200,000 deep in the args", "1 MB fenced", "1 MB of escaped quotes", "1 MB of ["],
)  # fmt: skip
def test_the_loop_served_a_hostile_reply_records_a_format_error_and_goes_on(
    box: Toolbox, text: str, noop: str
) -> None:
    submit = json.dumps({"tool": "submit", "args": {"message": "done"}})
    with StubServer(ok(text), ok(submit)) as stub:
        model = OpenAIModel("m", base_url=stub.url, max_retries=0, prices=FREE)
        traj = CurrentLoop(box, model).run(Task("memstore-1", "an issue", "tests"))
    bad, done = traj.turns
    assert bad.noop == noop and bad.completion["text"] == text
    assert done.prompt[-1]["content"].startswith(f"Format error: {noop}")
    assert traj.outcome.outcome == "stop"


def test_a_megabyte_of_calls_comes_through_the_client_and_parses_whole() -> None:
    count = 1_000_000 // (len(json.dumps(BASH)) + 2)
    text = json.dumps([BASH] * count)
    assert len(text) > 990_000
    with StubServer(ok(text)) as stub:
        model = OpenAIModel("m", base_url=stub.url, max_retries=0, prices=FREE)
        served = model.complete(REQUEST).text
    calls, error = parse_reply(served)
    assert error is None and len(calls) == count
    assert all(call == ToolCall("bash", {"command": "true"}) for call in calls)
