"""One item's page part, from hand-built trajectories: escaped, deduplicated, split by test list."""

from __future__ import annotations

import re
from typing import Any

from pytest_toolpolicy.view.item_html import render_item
from pytest_toolpolicy.view.markup import MAX_FIELD
from pytest_toolpolicy.view.redact import Redactor

CLEAN = Redactor({"X_API_KEY": "secret-value-123"})
ROW = {
    "status": "ok",
    "outcome": "stop",
    "resolved": True,
    "turns": 2,
    "tokens": 10,
    "cost_usd": 0.001,
}
SYSTEM = {"role": "system", "content": "you fix code"}


def _turn(index: int, prompt: list[dict[str, str]], text: str, **more: Any) -> dict[str, Any]:
    call = {"tool": "read_file", "args": {"path": "a.py"}}
    return {
        "index": index,
        "prompt": prompt,
        "completion": {"text": text, "usage": {"prompt_tokens": 5, "completion_tokens": 1}, "cost_usd": 0.0},
        "request": call,
        "rejections": [],
        "observations": [
            {"kind": "read_file", "target": "a.py", "result": "lines 1-3", "data": "1 x", "source": "model",
             "trust": "trusted", "caveat": None, "cites": []},
        ],
        "deferred": [],
        "noop": None,
        "extra_selections": [],
        "executed": [call],
        "suppressed": [],
        "retrieval": [],
        **more,
    }  # fmt: skip


def _record(turns: list[dict[str, Any]], **meta: Any) -> dict[str, Any]:
    return {
        "instance_id": "i",
        "variant": "current",
        "model": "sim",
        "turns": turns,
        "outcome": {"outcome": "stop", "detail": {}},
        "patch": "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-old\n+new <b>\n",
        "meta": meta,
    }


def test_model_text_is_escaped_everywhere() -> None:
    hostile = "<script>alert(1)</script></template>"
    page = render_item("i-current", _record([_turn(0, [SYSTEM], hostile)]), ROW, None, CLEAN)
    assert "<script>" not in page and "</template>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;/template&gt;" in page
    assert '<span class="add">+new &lt;b&gt;</span>' in page  # the diff too


def test_a_growing_history_shows_only_what_is_new() -> None:
    first = [SYSTEM, {"role": "user", "content": "the issue"}]
    second = [
        *first,
        {"role": "assistant", "content": "call one"},
        {"role": "user", "content": "result one"},
    ]
    page = render_item(
        "i-current", _record([_turn(0, first, "a"), _turn(1, second, "b")]), ROW, None, CLEAN
    )
    assert "4 messages" in page and "the first 2 as in the previous turn" in page
    assert page.count("the issue") == 1 and page.count("result one") == 1


def test_each_executed_call_carries_its_counterfactual_necessity() -> None:
    per_call = [{"ordinal": 0, "tool": "read_file", "necessary": True},
                {"ordinal": 1, "tool": "read_file", "necessary": False}]  # fmt: skip
    record = _record(
        [_turn(0, [SYSTEM], "a"), _turn(1, [SYSTEM], "b")], counterfactual={"per_call": per_call}
    )
    page = render_item("i-current", record, ROW, None, CLEAN)
    badges = re.findall(r'class="badge (ok|bad)">(necessary|not necessary)<', page)
    assert badges == [("ok", "necessary"), ("bad", "not necessary")]


def test_grading_splits_the_instance_lists_and_keeps_harness_faults_apart() -> None:
    grade = {"status": "unresolved", "tests": {"t::f2p": "failed", "t::p2p": "passed", "t::net": "failed"},
             "ignored": ["t::net"], "reason": None}  # fmt: skip
    instance = {"FAIL_TO_PASS": ["t::f2p"], "PASS_TO_PASS": ["t::p2p", "t::net"]}
    page = render_item("i-current", _record([], grade=grade), ROW, instance, CLEAN)
    assert "FAIL_TO_PASS: 0 of 1 passed" in page and "PASS_TO_PASS: 2 of 2 passed" in page
    assert "left out of the verdict" in page
    infra = {"status": "infra_error", "tests": {}, "reason": "environment build failed"}
    page = render_item("i-current", _record([], grade=infra), ROW, instance, CLEAN)
    assert "infra error: environment build failed" in page


def test_what_grading_put_back_and_flagged_is_on_the_page() -> None:
    grade = {
        "status": "unresolved", "tests": {}, "reason": "t::f2p failed",
        "reverted": ["conftest.py: a conftest file configures the test run"],
        "flagged": ["pkg/plugin.py: product code the test run loads as a plugin (kept)"],
    }  # fmt: skip
    page = render_item("i-current", _record([], grade=grade), ROW, None, CLEAN)
    assert "no part in grading): 1" in page and "conftest.py: a conftest file" in page
    assert "cannot vouch for (kept): 1" in page and "pkg/plugin.py: product code" in page


def test_a_rejection_in_the_ledger_is_shown_once() -> None:
    rejection = {"tool": "python.c", "reason": "unknown tool: python.c"}
    logged = {"kind": "rejected", "target": "python.c", "result": "unknown tool: python.c",
              "data": {"ok": False, "rejected": True, **rejection}, "source": "harness",
              "trust": "trusted", "caveat": None, "cites": []}  # fmt: skip
    turn = _turn(0, [SYSTEM], "{}", rejections=[rejection], observations=[logged])
    page = render_item("i-current", _record([turn]), ROW, None, CLEAN)
    assert page.count(">rejected</span>") == 1 and "unknown tool: python.c" in page
    older = _turn(0, [SYSTEM], "{}", rejections=[rejection], observations=[])  # saved before
    page = render_item("i-current", _record([older]), ROW, None, CLEAN)
    assert page.count(">rejected</span>") == 1 and "unknown tool: python.c" in page


def test_secrets_are_redacted_and_huge_fields_cut() -> None:
    turn = _turn(0, [SYSTEM], "key=secret-value-123 " + "y" * (MAX_FIELD + 50))
    page = render_item("i-current", _record([turn]), ROW, None, CLEAN)
    assert "secret-value-123" not in page and "key=[redacted]" in page
    assert "more characters: see trajectories.jsonl" in page
    assert "y" * (MAX_FIELD + 1) not in page


def test_an_item_without_a_trajectory_says_so_with_its_error() -> None:
    row = {**ROW, "status": "error", "error": "harness fault: <clone failed>"}
    page = render_item("i-current", None, row, None, CLEAN)
    assert "no trajectory was recorded" in page and "&lt;clone failed&gt;" in page


def test_a_grade_of_fifty_thousand_tests_splits_by_list() -> None:
    """About a megabyte of test ids: the split once built a set of both lists per test, 2.5
    billion insertions here."""
    n = 25_000
    f2p = [f"tests/test_a.py::test_{i}" for i in range(n)]
    p2p = [f"tests/test_b.py::test_{i}" for i in range(n)]
    other = ["tests/test_c.py::test_extra"]
    tests = {t: "passed" for t in f2p + p2p + other} | {f2p[0]: "failed"}
    grade = {"status": "unresolved", "tests": tests, "ignored": [], "reason": None}
    instance = {"FAIL_TO_PASS": f2p, "PASS_TO_PASS": p2p}
    page = render_item("i-current", _record([], grade=grade), ROW, instance, CLEAN)
    assert f"FAIL_TO_PASS: {n - 1} of {n} passed" in page
    assert f"PASS_TO_PASS: {n} of {n} passed" in page
    assert "other: 1 of 1 passed" in page and "tests/test_c.py::test_extra" in page
