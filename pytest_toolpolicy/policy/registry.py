"""The tool registry (spec §4.1): exactly six executable tools, plus two reserved non-tools."""

from __future__ import annotations

from typing import Any

from ..primitives.specs import TOOL_ARGS

RESERVED = ("ask_user", "stop")
RESERVED_LINES = {
    "ask_user": "ask_user — ask the operator a question",
    "stop": "stop — halt with a reason",
}

_TABLE: dict[str, tuple[str, str, str, tuple[str, ...]]] = {
    # name: (description, returns, category, keywords) — spec §4.1, verbatim
    "read_entity": (
        "read a code entity's signature and optional windowed body",
        "envelope {ok, error, data:{entity, body}}",
        "read",
        ("read", "view", "inspect", "signature", "body", "entity", "function", "class", "method"),
    ),
    "search_symbol": (
        "signature-only AST symbol search",
        "envelope {ok, error, data:{query, matches:[{selector, kind, signature, file, start}]}}",
        "search",
        ("search", "symbol", "find", "lookup", "name", "signature", "grep", "function"),
    ),
    "search_code": (
        "summarized + capped embedding retrieval over entities",
        "envelope {ok, error, data:{query, ranker, matches:[{selector, signature, doc, score}]}}",
        "search",
        ("search", "code", "retrieve", "similar", "related", "embedding", "semantic"),
    ),
    "edit_entity": (
        "exact-string replace scoped to an entity, linter-gated",
        "envelope {ok, error, data:{committed, lint, diff}}",
        "edit",
        ("edit", "change", "fix", "patch", "replace", "modify", "update", "write", "correct"),
    ),
    "run_test": (
        "execute a test; pass/fail + truncated traceback",
        "envelope {ok, error, data:{passed, exit_code, output}}",
        "execute",
        ("test", "run", "verify", "pytest", "fail", "pass", "assert", "regression"),
    ),
    "execute": (
        "sandboxed compute (no net / no host fs / bounded time)",
        "envelope {ok, error, data:{stdout, stderr, exit_code, timed_out}}",
        "execute",
        ("execute", "compute", "run", "calculate", "eval", "script", "code", "sandbox"),
    ),
}


def _entry(name: str) -> dict[str, Any]:
    description, returns, category, keywords = _TABLE[name]
    return {
        "name": name,
        "description": description,
        "args": {spec.name: spec.describe() for spec in TOOL_ARGS[name]},
        "returns": returns,
        "keywords": list(keywords),
        "category": category,
    }


REGISTRY: dict[str, dict[str, Any]] = {name: _entry(name) for name in TOOL_ARGS}
TOOL_NAMES: tuple[str, ...] = tuple(REGISTRY)


def candidate_line(name: str) -> str:
    """``name — description — args``: the compact line retrieval presents, never the full schema."""
    entry = REGISTRY[name]
    args = ", ".join(f"{arg}: {desc}" for arg, desc in entry["args"].items())
    return f"{name} — {entry['description']} — {args}"
