"""The trust gate (spec §6.2, §7 phase 5): four checks, the exact unverified shape, each gate."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pytest_toolpolicy.policy.config import PolicyConfig
from pytest_toolpolicy.policy.trust import SHAPES, trust_gate
from pytest_toolpolicy.primitives import Toolbox
from pytest_toolpolicy.types import ToolCall

CONFIG = PolicyConfig()
RUN = ToolCall("run_test", {"target": "tests/test_cart.py"})
EXE = ToolCall("execute", {"code": "print(1)"})
SYM = ToolCall("search_symbol", {"query": "total"})
EDIT = ToolCall("edit_entity", {"selector": "shop.cart.helper", "search": "2", "replace": "3"})


def _run(passed: bool = False, exit_code: int = 1, timed_out: bool = False) -> dict[str, Any]:
    return {
        "ok": True,
        "error": None,
        "data": {
            "target": "tests/test_cart.py",
            "mode": "pytest",
            "passed": passed,
            "exit_code": exit_code,
            "timed_out": timed_out,
            "duration_s": 0.4,
            "output": "E assert 1 == 2",
            "output_truncated": False,
            "sandbox": "bwrap",
        },
    }


def _exe(exit_code: int = 0, timed_out: bool = False) -> dict[str, Any]:
    return {
        "ok": True,
        "error": None,
        "data": {
            "stdout": "1\n",
            "stderr": "",
            "exit_code": exit_code,
            "timed_out": timed_out,
            "duration_s": 0.1,
            "sandbox": "bwrap",
        },
    }


def _sym(*matches: tuple[str, str]) -> dict[str, Any]:
    rows = [
        {"selector": s, "kind": "method", "signature": sig, "file": "src/shop/cart.py", "start": 1}
        for s, sig in matches
    ]
    return {
        "ok": True,
        "error": None,
        "data": {"query": "total", "matches": rows, "total": len(rows), "truncated": False},
    }


def _edit(**changes: Any) -> dict[str, Any]:
    data = {
        "selector": "shop.cart.helper",
        "file": "src/shop/cart.py",
        "committed": True,
        "matches": 1,
        "lint": {"clean": True, "errors": []},
        "diff": "-2\n+3",
    }
    data.update(changes)
    return {"ok": True, "error": None, "data": {k: v for k, v in data.items() if v is not ...}}


def _caveat(call: ToolCall, envelope: Any, config: PolicyConfig = CONFIG) -> str | None:
    return trust_gate(call, envelope, config).caveat


def test_a_correct_captured_run_test_is_trusted_as_is():
    envelope = _run(passed=False, exit_code=1)
    verdict = trust_gate(RUN, envelope, CONFIG)
    assert verdict.trusted and verdict.caveat is None and verdict.observation is envelope


def test_passed_contradicting_the_exit_code_is_unverified_with_the_exact_shape():
    envelope = _run(passed=True, exit_code=1)
    captured = copy.deepcopy(envelope)
    verdict = trust_gate(RUN, envelope, CONFIG)
    assert not verdict.trusted
    assert verdict.caveat == "exit_code: passed=true but exit_code=1"
    assert verdict.observation == {
        "ok": True,
        "trust": "unverified",
        "caveat": "exit_code: passed=true but exit_code=1",
        "data": captured,
    }


@pytest.mark.parametrize(
    ("call", "envelope", "caveat"),
    [
        (RUN, _run(passed=False, exit_code=0), "passed=false but exit_code=0"),
        (RUN, _run(passed=False, exit_code=0, timed_out=True), "passed=false but exit_code=0"),
        (RUN, _run(passed=False, exit_code=137, timed_out=True), None),
        (EXE, _exe(exit_code=0, timed_out=True), "timed_out=true but exit_code=0"),
        (EXE, _exe(exit_code=137, timed_out=True), None),
        (EXE, _exe(exit_code=3), None),
    ],
)
def test_exit_code_consistency(call: ToolCall, envelope: dict, caveat: str | None):
    assert _caveat(call, envelope) == (caveat and f"exit_code: {caveat}")


def test_exit_code_of_the_wrong_type():
    envelope = _exe()
    envelope["data"]["exit_code"] = "0"
    got = _caveat(EXE, envelope)
    assert got.startswith("exit_code: execute exit_code is str, not an int")
    assert "schema: execute data.exit_code is str, expected int" in got  # both checks named


def test_a_search_symbol_match_lacking_the_query_token_is_flagged():
    envelope = _sym(("shop.cart.Cart", "class Cart:"))
    assert _caveat(SYM, envelope) == "round_trip: match shop.cart.Cart lacks query token 'total'"
    assert _caveat(SYM, _sym(("shop.cart.Cart.total", "def total(self, discount=0):"))) is None


def test_the_query_token_is_the_last_dotted_component_case_insensitive():
    call = ToolCall("search_symbol", {"query": "memstore.MemStore.remember"})
    good = _sym(("memstore.store.MemStore.remember", "def remember(self, text):"))
    assert _caveat(call, good) is None
    assert _caveat(ToolCall("search_symbol", {"query": "TOTAL"}), _sym(("a.b.total", "x"))) is None
    bad = _sym(("memstore.store.MemStore.forget", "def forget(self, text):"))
    assert _caveat(call, bad) == (
        "round_trip: match memstore.store.MemStore.forget lacks query token 'remember'"
    )


def test_a_committed_edit_must_have_matched_once():
    assert _caveat(EDIT, _edit()) is None
    assert _caveat(EDIT, _edit(matches=2)) == (
        "round_trip: committed edit reports matches=2, expected 1"
    )
    assert _caveat(EDIT, _edit(matches=...)).startswith("round_trip: committed edit reports")


@pytest.mark.parametrize(
    ("lint", "caveat"),
    [
        (..., "lint: committed edit has no lint verdict"),
        (
            {"clean": "yes", "errors": []},
            "lint: lint verdict lacks a bool 'clean' and a list 'errors'",
        ),
        ({"clean": True, "errors": [{"code": "F821"}]}, "lint: lint clean=true but 1 error(s)"),
        ({"clean": False, "errors": []}, "lint: lint clean=false but 0 error(s)"),
        ({"clean": False, "errors": [{"code": "E999"}]}, None),
    ],
)
def test_a_committed_edit_carries_the_harness_lint_verdict(lint: Any, caveat: str | None):
    assert _caveat(EDIT, _edit(lint=lint)) == caveat


def test_an_uncommitted_edit_needs_no_lint_verdict():
    refused = {"ok": False, "error": "lint gate refused the edit", "data": {"committed": False}}
    assert _caveat(EDIT, refused) is None


@pytest.mark.parametrize(
    ("call", "envelope", "caveat"),
    [
        (RUN, ["not", "an", "envelope"], "envelope is list, not an object"),
        (
            RUN,
            {"ok": True, "data": {}},
            "envelope keys are ['data', 'ok'], expected ['data', 'error', 'ok']",
        ),
        (RUN, {"ok": "yes", "error": None, "data": None}, "envelope ok is str, not a bool"),
        (RUN, {"ok": False, "error": None, "data": None}, "failed envelope has no error string"),
        (RUN, {"ok": True, "error": "boom", "data": None}, "ok envelope has error str"),
        (
            ToolCall("bash"),
            {"ok": True, "error": None, "data": {}},
            "no declared shape for tool 'bash'",
        ),
        (
            RUN,
            {"ok": True, "error": None, "data": None},
            "run_test data is null, expected an object",
        ),
        (
            ToolCall("read_entity"),
            {"ok": True, "error": None, "data": {"entity": {}}},
            "read_entity data.entity lacks 'selector'",
        ),
        (
            SYM,
            {"ok": True, "error": None, "data": {"query": "q", "matches": [{}]}},
            "search_symbol data.matches[0] lacks 'selector'",
        ),
        (
            ToolCall("search_code"),
            {"ok": True, "error": None, "data": {"query": "q", "ranker": "bm25", "ranker_note": 3}},
            "search_code data.ranker_note is 3, expected str or null",
        ),
        (
            EDIT,
            {"ok": True, "error": None, "data": {"selector": "a.b", "file": "a.py"}},
            "edit_entity data lacks 'committed'",
        ),
        (
            EXE,
            {"ok": True, "error": None, "data": {"stdout": "", "stderr": b""}},
            "execute data.stderr is bytes, expected str",
        ),
    ],
)
def test_schema_failures(call: ToolCall, envelope: Any, caveat: str):
    # The exit_code check may fail on the same envelope too; the caveat names each failed check.
    assert f"schema: {caveat}" in _caveat(call, envelope).split("; ")


def test_schema_lacking_a_key_names_it():
    envelope = _run()
    del envelope["data"]["output"]
    assert _caveat(RUN, envelope) == "schema: run_test data lacks 'output'"
    envelope = _run()
    del envelope["data"]["exit_code"]
    assert _caveat(RUN, envelope.copy(), CONFIG.without("trust.exit_code")) == (
        "schema: run_test data lacks 'exit_code'"
    )


def test_a_failed_envelope_with_an_error_string_is_conformant():
    for call in (RUN, EXE, SYM, EDIT):
        assert trust_gate(
            call, {"ok": False, "error": "empty target", "data": None}, CONFIG
        ).trusted


@pytest.mark.parametrize(
    ("gate", "call", "envelope"),
    [
        ("trust.exit_code", RUN, _run(passed=True, exit_code=1)),
        ("trust.schema", ToolCall("read_entity"), {"ok": True, "error": None, "data": {}}),
        ("trust.round_trip", SYM, _sym(("shop.cart.Cart", "class Cart:"))),
        ("trust.lint", EDIT, _edit(lint=...)),
    ],
)
def test_each_gate_off_silences_its_check(gate: str, call: ToolCall, envelope: dict):
    name = gate.split(".", 1)[1]
    assert _caveat(call, envelope).startswith(f"{name}: ")
    assert trust_gate(call, envelope, CONFIG.without(gate)).trusted


def test_every_shape_names_a_real_tool():
    assert set(SHAPES) == {
        "read_entity",
        "search_symbol",
        "search_code",
        "edit_entity",
        "run_test",
        "execute",
    }


REAL_CALLS = [
    ("read_entity", {"selector": "shop.cart.Cart.total"}),
    ("read_entity", {"selector": "shop.cart.Cart", "body": True, "window": 3}),
    ("read_entity", {"selector": "shop.nope"}),
    ("search_symbol", {"query": "cart"}),
    ("search_symbol", {"query": "shop.Cart.total", "keywords": ["discount"]}),
    ("search_symbol", {"query": "zzz_nothing"}),
    ("search_code", {"query": "sum of prices minus discount", "cap": 3}),
    ("edit_entity", {"selector": "shop.cart.helper", "search": "x * 2", "replace": "x * 3"}),
    ("edit_entity", {"selector": "shop.cart.helper", "search": "x * 3", "replace": "y +"}),
    ("edit_entity", {"selector": "shop.cart.helper", "search": "absent", "replace": "x"}),
    ("run_test", {"target": "tests/test_cart.py", "timeout": 60}),
    ("run_test", {"target": "true", "timeout": 30}),
    ("run_test", {"target": "tests/test_nope.py::test_x", "timeout": 60}),
    ("execute", {"code": "print(6 * 7)"}),
    ("execute", {"code": "import sys; sys.exit(3)"}),
    ("execute", {"code": "import time; time.sleep(30)", "timeout": 1}),
]


def test_every_real_primitive_envelope_is_trusted(box: Toolbox):
    seen = set()
    for tool, args in REAL_CALLS:
        envelope = box.call(tool, args)
        verdict = trust_gate(ToolCall(tool, args), envelope, CONFIG)
        assert verdict.trusted, (tool, args, verdict.caveat, envelope)
        assert verdict.observation is envelope
        seen.add((tool, envelope["ok"]))
        if tool == "execute" and args.get("timeout") == 1:
            assert envelope["data"]["timed_out"] is True
    # Every tool produced an ok envelope, so every shape spec met real data.
    assert {tool for tool, ok in seen if ok} == set(SHAPES)
