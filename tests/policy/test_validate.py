"""validate: the §3.2 rules in order with their exact reasons, the rejection shape, and each gate."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_toolpolicy.policy.config import PolicyConfig
from pytest_toolpolicy.policy.ledger import Ledger
from pytest_toolpolicy.policy.parse import parse_reply
from pytest_toolpolicy.policy.validate import rejection_observation, validate
from pytest_toolpolicy.primitives.codeindex import CodeIndex
from pytest_toolpolicy.types import Observation, Rejection, ToolCall

SELECTOR = "memstore.MemStore.remember"
FULL = PolicyConfig()
EDIT = {"selector": SELECTOR, "search": "return key", "replace": "return key.strip()"}


def evidence(*selectors: str) -> Ledger:
    return Ledger().append(Observation("read_entity", selectors[0], "ok", cites=selectors))


def check(
    index: CodeIndex,
    tool: str,
    args: dict[str, Any],
    ledger: Ledger | None = None,
    config: PolicyConfig = FULL,
) -> str | None:
    rejection = validate(ToolCall(tool, args), ledger or Ledger(), index, config)
    if rejection is not None:
        assert rejection.tool == tool
    return None if rejection is None else rejection.reason


def test_unknown_tool(index: CodeIndex) -> None:
    assert check(index, "bash", {"cmd": "ls"}) == "unknown tool: bash"


@pytest.mark.parametrize("name", ["ask_user", "stop"])
def test_reserved_names_are_not_tools(index: CodeIndex, name: str) -> None:
    call = parse_reply(f'{{"tool": "{name}", "args": {{}}}}', affordances=False).call
    assert validate(call, Ledger(), index, FULL) == Rejection(name, f"unknown tool: {name}")


@pytest.mark.parametrize(
    ("tool", "args", "reason"),
    [
        ("read_entity", {}, "missing required arg: selector"),
        ("read_entity", {"selector": SELECTOR, "lines": 3}, "unknown arg: lines"),
        ("read_entity", {"selector": 7}, "invalid arg: selector (expected str, got int)"),
        ("read_entity", {"selector": SELECTOR, "body": "yes"}, "invalid arg: body (expected bool, got str)"),
        ("read_entity", {"selector": SELECTOR, "window": 0}, "invalid arg: window (expected int 1..100, got 0)"),
        ("read_entity", {"selector": SELECTOR, "window": 101}, "invalid arg: window (expected int 1..100, got 101)"),
        ("search_symbol", {"query": "x", "keywords": ["a", 1]}, "invalid arg: keywords (expected list[str], got list)"),
        ("search_code", {"query": "x", "cap": 9}, "invalid arg: cap (expected int 1..8, got 9)"),
        ("edit_entity", {**EDIT, "search": "s" * 401}, "invalid arg: search (expected str of at most 400 chars, got 401)"),
        ("edit_entity", {**EDIT, "replace": "r" * 2001}, "invalid arg: replace (expected str of at most 2000 chars, got 2001)"),
        ("run_test", {"target": "t", "timeout": 301}, "invalid arg: timeout (expected int 1..300, got 301)"),
        ("execute", {"code": "1", "timeout": 31}, "invalid arg: timeout (expected int 1..30, got 31)"),
    ],
)  # fmt: skip
def test_arg_rules(index: CodeIndex, tool: str, args: dict[str, Any], reason: str) -> None:
    assert check(index, tool, args, evidence(SELECTOR)) == reason


def test_out_of_cap_is_rejected_not_clamped(index: CodeIndex) -> None:
    assert check(index, "read_entity", {"selector": SELECTOR, "window": 100}) is None
    assert check(index, "read_entity", {"selector": SELECTOR, "window": 1000}) is not None


@pytest.mark.parametrize(
    ("tool", "args", "reason"),
    [
        ("read_entity", {"selector": "memstore.Nope"}, "precondition failed: unknown selector memstore.Nope"),
        ("search_symbol", {"query": "  \n"}, "precondition failed: empty query"),
        ("search_code", {"query": ""}, "precondition failed: empty query"),
        ("edit_entity", {**EDIT, "selector": "repo.memstore.MemStore.remember"},
         "precondition failed: no evidence for selector repo.memstore.MemStore.remember"),
        ("run_test", {"target": " "}, "precondition failed: empty target"),
        ("execute", {"code": ""}, "precondition failed: empty code"),
        ("execute", {"code": "\n  \n"}, "precondition failed: empty code"),
    ],
)  # fmt: skip
def test_preconditions(index: CodeIndex, tool: str, args: dict[str, Any], reason: str) -> None:
    assert check(index, tool, args) == reason


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("read_entity", {"selector": SELECTOR, "body": True, "window": 5}),
        ("read_entity", {"selector": "memstore"}),
        ("search_symbol", {"query": "remember", "keywords": ["key"], "k": 3}),
        ("search_code", {"query": "store a key"}),
        ("edit_entity", EDIT),
        ("run_test", {"target": "tests/test_memstore.py::test_remember"}),
        ("run_test", {"target": "python -c 'print(1)'"}),
        ("execute", {"code": "print(1)"}),
    ],
)
def test_valid_calls_pass(index: CodeIndex, tool: str, args: dict[str, Any]) -> None:
    assert check(index, tool, args, evidence(SELECTOR)) is None


def test_edit_passes_once_a_read_cites_the_selector(index: CodeIndex) -> None:
    assert check(index, "edit_entity", EDIT).startswith("precondition failed: no evidence")
    assert check(index, "edit_entity", EDIT, evidence("memstore.MemStore")) is not None
    assert check(index, "edit_entity", EDIT, evidence(SELECTOR)) is None


def test_unverified_observation_is_not_evidence(index: CodeIndex) -> None:
    ledger = Ledger().append(
        Observation("read_entity", SELECTOR, "ok", trust="unverified", cites=(SELECTOR,))
    )
    assert check(index, "edit_entity", EDIT, ledger) is not None


def test_rules_run_in_order(index: CodeIndex) -> None:
    assert check(index, "bash", {"nope": 1}) == "unknown tool: bash"
    assert check(index, "edit_entity", {"selector": SELECTOR}) == "missing required arg: search"
    assert check(index, "read_entity", {"selector": "x.y", "window": 0}).startswith("invalid arg")


def test_rejection_observation_shape() -> None:
    observation = rejection_observation(Rejection("bash", "unknown tool: bash"))
    assert observation.data == {
        "ok": False,
        "rejected": True,
        "tool": "bash",
        "reason": "unknown tool: bash",
    }
    assert (observation.kind, observation.target, observation.result, observation.source) == (
        "rejected",
        "bash",
        "unknown tool: bash",
        "harness",
    )
    assert observation.line() == "rejected, bash, unknown tool: bash"


# -- gates switched off ---------------------------------------------------------------------


def test_registry_gate_off_lets_unknown_tools_through(index: CodeIndex) -> None:
    config = FULL.without("validate.registry")
    assert check(index, "bash", {"cmd": "ls"}, config=config) is None
    assert check(index, "read_entity", {"selector": "x.y"}, config=config) is not None


def test_args_gate_off_skips_arg_rules_and_keeps_preconditions(index: CodeIndex) -> None:
    config = FULL.without("validate.args")
    assert check(index, "read_entity", {"selector": SELECTOR, "window": 0}, config=config) is None
    assert check(index, "read_entity", {"selector": SELECTOR, "bogus": 1}, config=config) is None
    assert check(index, "read_entity", {}, config=config) is None
    assert check(index, "search_code", {"query": " "}, config=config) == (
        "precondition failed: empty query"
    )


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("read_entity", {"selector": ["a"]}),
        ("search_symbol", {"query": 3}),
        ("edit_entity", {"selector": {"x": 1}}),
        ("run_test", {"target": None}),
        ("execute", {"code": 0}),
    ],
)
def test_args_gate_off_wrong_types_do_not_crash_preconditions(
    index: CodeIndex, tool: str, args: dict[str, Any]
) -> None:
    assert check(index, tool, args, config=FULL.without("validate.args")) is None


def test_evidence_gate_off_lets_an_unread_edit_run(index: CodeIndex) -> None:
    config = FULL.without("validate.evidence")
    assert check(index, "edit_entity", EDIT, config=config) is None
    assert check(index, "read_entity", {"selector": "x.y"}, config=config) is not None


def test_non_object_args_are_rejected_not_raised(index: CodeIndex) -> None:
    rejection = validate(ToolCall("execute", "print(1)"), Ledger(), index, FULL)  # type: ignore[arg-type]
    assert rejection == Rejection("execute", "invalid arg: args (expected object, got str)")
