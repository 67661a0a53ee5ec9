"""Argument specs of the six primitives (spec §4.1): types, defaults and caps in one place.

The policy's registry and validator build on these, so a cap is written once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ArgSpec:
    name: str
    type: str  # "str" | "int" | "bool" | "list[str]"
    required: bool = False
    default: Any = None
    lo: int | None = None  # int range, inclusive
    hi: int | None = None
    max_len: int | None = None  # str length cap

    def describe(self) -> str:
        """The spec's compact form, e.g. ``int 1..100 (default 100)``."""
        text = self.type
        if self.lo is not None:
            text += f" {self.lo}..{self.hi}"
        if self.max_len is not None:
            text += f" ≤{self.max_len}"
        return text + (" (required)" if self.required else f" (default {_show(self.default)})")


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "none" if value is None else str(value)


TOOL_ARGS: dict[str, tuple[ArgSpec, ...]] = {
    "read_entity": (
        ArgSpec("selector", "str", required=True),
        ArgSpec("body", "bool", default=False),
        ArgSpec("window", "int", default=100, lo=1, hi=100),
    ),
    "search_symbol": (
        ArgSpec("query", "str", required=True),
        ArgSpec("keywords", "list[str]", default=None),
        ArgSpec("k", "int", default=10, lo=1, hi=10),
    ),
    "search_code": (
        ArgSpec("query", "str", required=True),
        ArgSpec("cap", "int", default=8, lo=1, hi=8),
    ),
    "edit_entity": (
        ArgSpec("selector", "str", required=True),
        ArgSpec("search", "str", required=True, max_len=400),
        ArgSpec("replace", "str", required=True, max_len=2000),
    ),
    "run_test": (
        ArgSpec("target", "str", required=True),
        ArgSpec("timeout", "int", default=120, lo=1, hi=300),
    ),
    "execute": (
        ArgSpec("code", "str", required=True),
        ArgSpec("timeout", "int", default=10, lo=1, hi=30),
    ),
}


def _type_ok(spec: ArgSpec, value: Any) -> bool:
    if spec.type == "str":
        return isinstance(value, str)
    if spec.type == "bool":
        return isinstance(value, bool)
    if spec.type == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _got(value: Any) -> str:
    text = repr(value) if isinstance(value, str) else str(value)
    if isinstance(value, bool):
        text = "true" if value else "false"
    return text if len(text) <= 40 else text[:37] + "..."


def check_args(tool: str, args: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """Check ``args`` against the tool's spec (spec §3.2 rule 2, with its exact reason strings).

    Returns ``(arguments with defaults filled in, None)`` or ``(None, reason)``.
    """
    specs = {s.name: s for s in TOOL_ARGS[tool]}
    for name in args:
        if name not in specs:
            return None, f"unknown arg: {name}"
    out: dict[str, Any] = {}
    for spec in TOOL_ARGS[tool]:
        if spec.name not in args or (args[spec.name] is None and not spec.required):
            if spec.required:
                return None, f"missing required arg: {spec.name}"
            out[spec.name] = spec.default
            continue
        value = args[spec.name]
        if not _type_ok(spec, value):
            kind = type(value).__name__ if value is not None else "null"
            return None, f"invalid arg: {spec.name} (expected {spec.type}, got {kind})"
        if spec.lo is not None and not spec.lo <= value <= spec.hi:
            why = f"expected int {spec.lo}..{spec.hi}, got {_got(value)}"
            return None, f"invalid arg: {spec.name} ({why})"
        if spec.max_len is not None and len(value) > spec.max_len:
            why = f"expected str of at most {spec.max_len} chars, got {len(value)}"
            return None, f"invalid arg: {spec.name} ({why})"
        if isinstance(value, str) and not is_text(value):
            return None, f"invalid arg: {spec.name} (not valid text: a lone surrogate)"
        out[spec.name] = value
    return out, None


def is_text(value: str) -> bool:
    """Whether ``value`` can reach a file, a command line or a log: a lone surrogate (from a
    reply's ``"\\ud800"``) cannot, and is bad input rather than a harness fault."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
