"""Spec §7 phase 1: six executable tools, two reserved names, the exact schema, JSON round-trip."""

from __future__ import annotations

import json

from pytest_toolpolicy.policy.registry import (
    REGISTRY,
    RESERVED,
    RESERVED_LINES,
    TOOL_NAMES,
    candidate_line,
)

FIELDS = {"name", "description", "args", "returns", "keywords", "category"}
SPEC = {  # name: (description, category, keywords) — spec §4.1
    "read_entity": (
        "read a code entity's signature and optional windowed body",
        "read",
        "read, view, inspect, signature, body, entity, function, class, method",
    ),
    "search_symbol": (
        "signature-only AST symbol search",
        "search",
        "search, symbol, find, lookup, name, signature, grep, function",
    ),
    "search_code": (
        "summarized + capped embedding retrieval over entities",
        "search",
        "search, code, retrieve, similar, related, embedding, semantic",
    ),
    "edit_entity": (
        "exact-string replace scoped to an entity, linter-gated",
        "edit",
        "edit, change, fix, patch, replace, modify, update, write, correct",
    ),
    "run_test": (
        "execute a test; pass/fail + truncated traceback",
        "execute",
        "test, run, verify, pytest, fail, pass, assert, regression",
    ),
    "execute": (
        "sandboxed compute (no net / no host fs / bounded time)",
        "execute",
        "execute, compute, run, calculate, eval, script, code, sandbox",
    ),
}
ARGS = {
    "read_entity": {
        "selector": "str (required)",
        "body": "bool (default false)",
        "window": "int 1..100 (default 100)",
    },
    "search_symbol": {"query": "str (required)", "k": "int 1..10 (default 10)"},
    "search_code": {"query": "str (required)", "cap": "int 1..8 (default 8)"},
    "edit_entity": {
        "selector": "str (required)",
        "search": "str ≤400 (required)",
        "replace": "str ≤2000 (required)",
    },
    "run_test": {"target": "str (required)", "timeout": "int 1..300 (default 120)"},
    "execute": {"code": "str (required)", "timeout": "int 1..30 (default 10)"},
}


def test_exactly_six_tools_and_two_reserved_names():
    assert tuple(SPEC) == TOOL_NAMES
    assert len(REGISTRY) == 6
    assert RESERVED == ("ask_user", "stop")
    assert not set(RESERVED) & set(REGISTRY)


def test_each_entry_has_the_spec_fields_and_values():
    for name, (description, category, keywords) in SPEC.items():
        entry = REGISTRY[name]
        assert set(entry) == FIELDS
        assert entry["name"] == name
        assert entry["description"] == description
        assert entry["category"] == category
        assert entry["keywords"] == keywords.split(", ")
        assert entry["returns"].startswith("envelope {ok, error, data:")
        for arg, text in ARGS[name].items():
            assert entry["args"][arg] == text


def test_the_spec_example_entry_exactly():
    assert REGISTRY["read_entity"] == {
        "name": "read_entity",
        "description": "read a code entity's signature and optional windowed body",
        "args": {
            "selector": "str (required)",
            "body": "bool (default false)",
            "window": "int 1..100 (default 100)",
        },
        "returns": "envelope {ok, error, data:{entity, body}}",
        "keywords": [
            "read",
            "view",
            "inspect",
            "signature",
            "body",
            "entity",
            "function",
            "class",
            "method",
        ],  # fmt: skip
        "category": "read",
    }


def test_search_symbol_keywords_arg_is_an_optional_string_list():
    text = REGISTRY["search_symbol"]["args"]["keywords"]
    assert text.startswith("list[str]") and "required" not in text


def test_json_round_trip():
    assert json.loads(json.dumps(REGISTRY)) == REGISTRY


def test_candidate_and_reserved_lines():
    assert candidate_line("run_test") == (
        "run_test — execute a test; pass/fail + truncated traceback — "
        "target: str (required), timeout: int 1..300 (default 120)"
    )
    assert RESERVED_LINES == {
        "ask_user": "ask_user — ask the operator a question",
        "stop": "stop — halt with a reason",
    }
