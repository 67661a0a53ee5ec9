"""parse_reply: the exact reply shape, the documented tolerance, terminals, several calls, and a
property test that parse + validate never raise on bad input."""

from __future__ import annotations

import dataclasses
import json
from typing import get_args

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_toolpolicy.policy.config import GATES, PolicyConfig
from pytest_toolpolicy.policy.ledger import Ledger
from pytest_toolpolicy.policy.parse import (
    Parsed,
    ParsedCall,
    ParsedNoop,
    ParsedTerminal,
    parse_reply,
)
from pytest_toolpolicy.policy.registry import RESERVED, TOOL_NAMES
from pytest_toolpolicy.policy.validate import validate
from pytest_toolpolicy.primitives.codeindex import CodeIndex
from pytest_toolpolicy.primitives.specs import TOOL_ARGS
from pytest_toolpolicy.types import (
    Observation,
    Outcome,
    OutcomeKind,
    Rejection,
    TerminalOutcome,
    ToolCall,
)

READ = {"tool": "read_entity", "args": {"selector": "memstore.MemStore.remember"}}
SEARCH = {"tool": "search_symbol", "args": {"query": "remember"}}


def reply(*objects: object, sep: str = "\n") -> str:
    return sep.join(json.dumps(o) for o in objects)


def test_one_object_is_a_call() -> None:
    parsed = parse_reply(reply(READ))
    assert parsed == ParsedCall(ToolCall("read_entity", READ["args"]))


@pytest.mark.parametrize(
    ("text", "variant", "kind", "fields"),
    [
        (reply(READ), ParsedCall, "call", {"kind", "call", "deferred"}),
        ('{"tool": "stop", "args": {}}', ParsedTerminal, "terminal", {"kind", "outcome", "deferred"}),
        ("prose", ParsedNoop, "noop", {"kind", "reason"}),
    ],
    ids=["call", "terminal", "noop"],
)  # fmt: skip
def test_each_reply_kind_is_its_own_variant_holding_only_its_fields(
    text: str, variant: type, kind: str, fields: set[str]
) -> None:
    parsed = parse_reply(text)
    assert type(parsed) is variant and isinstance(parsed, Parsed)
    assert parsed.kind == kind
    assert {f.name for f in dataclasses.fields(parsed)} == fields
    with pytest.raises(dataclasses.FrozenInstanceError):
        parsed.kind = "noop"  # type: ignore[misc]


def test_the_kind_tag_is_fixed_by_the_variant_not_passed() -> None:
    with pytest.raises(TypeError):
        ParsedNoop(kind="call", reason="x")  # type: ignore[call-arg]
    assert ParsedNoop("x") != ParsedCall(ToolCall("x"))
    assert ParsedTerminal(Outcome("stop", {"reason": ""})).deferred == ()


@pytest.mark.parametrize(
    "text",
    [
        "  \n" + reply(READ) + "\n\t ",
        "```\n" + reply(READ) + "\n```",
        "```json\n" + reply(READ) + "\n```",
        "\n```json\n  " + reply(READ) + "  \n```\n",
    ],
    ids=["whitespace", "fence", "json-fence", "fence-in-whitespace"],
)
def test_tolerated_wrappers(text: str) -> None:
    assert parse_reply(text).call == ToolCall("read_entity", READ["args"])


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "reply is not JSON: empty reply"),
        ("   ", "reply is not JSON: empty reply"),
        ("```json\n\n```", "reply is not JSON: empty reply"),
        ("I will read it: " + reply(READ), "reply is not JSON: Expecting value (char 0)"),
        (reply(READ) + " done.", f"reply is not JSON: text after the JSON (char {len(reply(READ)) + 1})"),
        ("```python\n" + reply(READ) + "\n```", "reply is not JSON: Expecting value (char 0)"),
        ("```\n```json\n" + reply(READ) + "\n```\n```", "reply is not JSON: Expecting value (char 0)"),
        ("{'tool': 'stop'}", "reply is not JSON: Expecting property name enclosed in double quotes (char 1)"),
        ("[]", "reply is a JSON list of no calls"),
        ("[] []", "reply is a JSON list of no calls"),
        ('{"args": {}}', 'reply has no "tool" field'),
        ('{"tool": 7}', '"tool" is not a string'),
        ('{"tool": null, "args": {}}', '"tool" is not a string'),
        ('{"tool": "stop", "args": []}', '"args" is not an object'),
        ('{"tool": "stop", "args": null}', '"args" is not an object'),
        ('{"tool": "stop", "args": {}, "why": "done"}', 'reply has an unknown field: "why"'),
        ('"read_entity"', "reply is not a JSON object: got string"),
        ("42", "reply is not a JSON object: got number"),
        ("[[" + reply(READ) + "]]", "reply is not a JSON object: got array"),
        ("[" * 100_000, "reply is nested deeper than 64 levels"),
    ],
)  # fmt: skip
def test_noop_reasons(text: str, reason: str) -> None:
    assert parse_reply(text) == ParsedNoop(reason)


def test_non_text_reply_is_a_noop() -> None:
    assert parse_reply(None).reason == "reply is not text: got NoneType"  # type: ignore[arg-type]


def test_huge_integer_is_a_noop_not_a_crash() -> None:
    parsed = parse_reply('{"tool": "execute", "args": {"timeout": ' + "9" * 5000 + "}}")
    assert parsed.kind == "noop"
    assert parsed.reason.startswith("reply is not JSON: ")


def test_missing_args_is_empty_object() -> None:
    assert parse_reply('{"tool": "search_code"}').call == ToolCall("search_code", {})


@pytest.mark.parametrize(
    "text",
    [
        reply([READ, SEARCH, {"tool": "bash"}]),
        reply(READ, SEARCH, {"tool": "bash"}),
        reply(READ, SEARCH, {"tool": "bash"}, sep=""),
        "```json\n" + reply(READ, [SEARCH, {"tool": "bash"}]) + "\n```",
    ],
    ids=["list", "concatenated", "no-separator", "mixed-in-fence"],
)
def test_several_calls_first_runs_rest_deferred_in_order(text: str) -> None:
    parsed = parse_reply(text)
    assert parsed.kind == "call"
    assert parsed.call == ToolCall("read_entity", READ["args"])
    assert parsed.deferred == (ToolCall("search_symbol", SEARCH["args"]), ToolCall("bash", {}))


@pytest.mark.parametrize("serialize", [True, False])
def test_serialize_keeps_every_call_in_order(serialize: bool) -> None:
    parsed = parse_reply(reply([READ, SEARCH]), serialize=serialize)
    assert (parsed.call, *parsed.deferred) == (
        ToolCall("read_entity", READ["args"]),
        ToolCall("search_symbol", SEARCH["args"]),
    )


def test_one_bad_call_among_several_makes_the_reply_a_noop() -> None:
    parsed = parse_reply(reply([READ, {"args": {}}]))
    assert parsed == ParsedNoop('call 2 of 2: reply has no "tool" field')


def test_ask_user_is_a_terminal_outcome_in_the_exact_shape() -> None:
    parsed = parse_reply('{"tool": "ask_user", "args": {"question": "Which version?"}}')
    assert parsed.kind == "terminal"
    assert parsed.outcome == Outcome("ask_user", {"question": "Which version?"})
    assert parsed.outcome.record() == {"outcome": "ask_user", "question": "Which version?"}


def test_stop_is_a_terminal_outcome_in_the_exact_shape() -> None:
    parsed = parse_reply('{"tool": "stop", "args": {"reason": "fixed"}}')
    assert parsed.outcome.record() == {"outcome": "stop", "reason": "fixed"}


@pytest.mark.parametrize(
    ("args", "record"),
    [
        ({}, {"outcome": "stop", "reason": ""}),
        ({"reason": 3}, {"outcome": "stop", "reason": ""}),
        ({"reason": None}, {"outcome": "stop", "reason": ""}),
        ({"reason": "ok", "extra": 1}, {"outcome": "stop", "reason": "ok"}),
    ],
)
def test_terminal_missing_or_wrong_typed_text_becomes_empty(args: dict, record: dict) -> None:
    assert parse_reply(reply({"tool": "stop", "args": args})).outcome.record() == record


def test_terminal_with_calls_after_it_records_them_as_deferred() -> None:
    parsed = parse_reply(reply({"tool": "stop", "args": {"reason": "done"}}, READ))
    assert parsed.kind == "terminal"
    assert parsed.deferred == (ToolCall("read_entity", READ["args"]),)


def test_terminal_after_a_call_is_deferred_like_any_call() -> None:
    parsed = parse_reply(reply(READ, {"tool": "stop", "args": {"reason": "done"}}))
    assert parsed.kind == "call"
    assert parsed.deferred == (ToolCall("stop", {"reason": "done"}),)


def test_the_reserved_names_are_exactly_the_terminal_outcomes() -> None:
    assert set(RESERVED) == set(get_args(TerminalOutcome))
    assert set(get_args(TerminalOutcome)) < set(get_args(OutcomeKind))
    for name in RESERVED:
        parsed = parse_reply(reply({"tool": name, "args": {}}))
        assert isinstance(parsed, ParsedTerminal) and parsed.outcome.outcome == name


@pytest.mark.parametrize("name", RESERVED)
def test_affordances_off_reserved_names_are_ordinary_calls(name: str) -> None:
    text = reply({"tool": name, "args": {}})
    assert parse_reply(text).kind == "terminal"
    parsed = parse_reply(text, affordances=False)
    assert parsed == ParsedCall(ToolCall(name, {}))


# -- bad input: parse + validate never raise ------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
arg_names = st.sampled_from(sorted({s.name for specs in TOOL_ARGS.values() for s in specs}))
tool_names = st.sampled_from((*TOOL_NAMES, *RESERVED, "bash", "")) | st.text(max_size=20)
call_objects = st.fixed_dictionaries(
    {"tool": tool_names | json_values},
    optional={
        "args": st.dictionaries(arg_names | st.text(max_size=10), json_values, max_size=4)
        | json_values
    },
)
huge = st.integers(10_000, 200_000).map(lambda n: "x" * n)
replies = st.one_of(
    st.text(),
    json_values.map(json.dumps),
    call_objects.map(json.dumps),
    st.lists(call_objects, max_size=4).map(json.dumps),
    st.lists(call_objects, min_size=1, max_size=3).map(lambda cs: "\n".join(map(json.dumps, cs))),
    call_objects.map(lambda c: f"```json\n{json.dumps(c)}\n```"),
    st.tuples(st.sampled_from(TOOL_NAMES), huge).map(
        lambda t: json.dumps({"tool": t[0], "args": {"selector": t[1], "query": t[1]}})
    ),
    huge,
    st.text().map(lambda t: "```json\n" + t + "\n```"),
)
configs = st.sets(st.sampled_from(GATES)).map(lambda gates: PolicyConfig(gates=frozenset(gates)))


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=replies, serialize=st.booleans(), affordances=st.booleans(), config=configs)
def test_parse_and_validate_never_raise(
    index: CodeIndex, text: str, serialize: bool, affordances: bool, config: PolicyConfig
) -> None:
    parsed = parse_reply(text, serialize=serialize, affordances=affordances)
    assert isinstance(parsed, (ParsedCall, ParsedTerminal, ParsedNoop))
    if parsed.kind == "noop":
        assert isinstance(parsed, ParsedNoop)
        assert isinstance(parsed.reason, str) and parsed.reason
        return
    if parsed.kind == "terminal":
        assert isinstance(parsed, ParsedTerminal)
        assert parsed.outcome.outcome in RESERVED
        key = "question" if parsed.outcome.outcome == "ask_user" else "reason"
        assert set(parsed.outcome.record()) == {"outcome", key}
        assert isinstance(parsed.outcome.detail[key], str)
        calls = parsed.deferred
    else:
        assert isinstance(parsed, ParsedCall) and isinstance(parsed.call, ToolCall)
        calls = (parsed.call, *parsed.deferred)
    ledger = Ledger().append(
        Observation("search_symbol", "remember", "1 match", cites=("memstore.MemStore.remember",))
    )
    for call in calls:
        assert isinstance(call.tool, str) and isinstance(call.args, dict)
        verdict = validate(call, ledger, index, config)
        assert verdict is None or (isinstance(verdict, Rejection) and verdict.reason)
