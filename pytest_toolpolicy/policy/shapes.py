"""The declared ``data`` shape of each primitive's envelope, which the trust gate's schema check
holds captures to: required keys and their types; extra keys are allowed."""

from __future__ import annotations

from typing import Any

# key -> a type name ("str", "int", "num", "bool", "list", "dict"; a trailing "?" allows null),
# a nested Shape (an object), or a one-item list [Shape] (a list of such objects)
Shape = dict[str, Any]

_ENTITY: Shape = {
    "selector": "str",
    "kind": "str",
    "name": "str",
    "signature": "str",
    "doc": "str",
    "file": "str",
    "start": "int",
    "end": "int",
}
_SYMBOL_MATCH: Shape = {
    "selector": "str",
    "kind": "str",
    "signature": "str",
    "file": "str",
    "start": "int",
}
_CODE_MATCH: Shape = {**_SYMBOL_MATCH, "doc": "str", "score": "num"}

SHAPES: dict[str, Shape] = {
    "read_entity": {"entity": _ENTITY, "body": "str?", "lines": "list?", "truncated": "bool"},
    "search_symbol": {
        "query": "str",
        "matches": [_SYMBOL_MATCH],
        "total": "int",
        "truncated": "bool",
    },
    "search_code": {
        "query": "str",
        "ranker": "str",
        "ranker_note": "str?",
        "matches": [_CODE_MATCH],
        "total_entities": "int",
        "truncated": "bool",
    },
    # ``matches``, ``lint`` and ``diff`` are the round-trip and lint checks' business.
    "edit_entity": {"selector": "str", "file": "str", "committed": "bool"},
    "run_test": {
        "target": "str",
        "mode": "str",
        "passed": "bool",
        "exit_code": "int",
        "timed_out": "bool",
        "duration_s": "num",
        "output": "str",
        "output_truncated": "bool",
        "sandbox": "str",
    },
    "execute": {
        "stdout": "str",
        "stderr": "str",
        "exit_code": "int",
        "timed_out": "bool",
        "duration_s": "num",
        "sandbox": "str",
    },
}


def mismatch(value: Any, shape: Shape | str | list[Any], where: str) -> str | None:
    """Why ``value`` does not have ``shape``, or None."""
    if isinstance(shape, str):
        nullable = shape.endswith("?")
        kind = shape.rstrip("?")
        if (nullable and value is None) or is_kind(kind, value):
            return None
        expected = f"{kind} or null" if nullable else kind
        return f"{where} is {show(value)}, expected {expected}"
    if isinstance(shape, list):
        if not isinstance(value, list):
            return f"{where} is {show(value)}, expected a list"
        for i, item in enumerate(value):
            if why := mismatch(item, shape[0], f"{where}[{i}]"):
                return why
        return None
    if not isinstance(value, dict):
        return f"{where} is {show(value)}, expected an object"
    for key, sub in shape.items():
        if key not in value:
            return f"{where} lacks {key!r}"
        if why := mismatch(value[key], sub, f"{where}.{key}"):
            return why
    return None


_KINDS: dict[str, type | tuple[type, ...]] = {
    "str": str,
    "int": int,
    "num": (int, float),
    "bool": bool,
    "list": list,
    "dict": dict,
}


def is_kind(kind: str, value: Any) -> bool:
    if kind in ("int", "num") and isinstance(value, bool):
        return False
    return isinstance(value, _KINDS[kind])


def show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return str(value)
    return type(value).__name__
