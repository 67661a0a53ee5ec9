"""The model's reply → one call, one terminal outcome, or a no-op turn (spec §5, §3.3, §6.1).

The reply shape is one JSON object ``{"tool": NAME, "args": {...}}`` with no prose. The tolerance
allowed, and nothing more:

- whitespace around the reply;
- ONE markdown code fence around it (```` ``` ```` or ```` ```json ````, each on its own line);
- a missing ``"args"`` reads as ``{}`` (``null`` or any other non-object is a no-op);
- several calls — a JSON list of call objects, or JSON objects one after another — are parsed,
  not refused: the first is the call and the rest come back in order as ``deferred``. Several
  calls in one reply are a serialization fault the loop records (§6.1), not a parse failure.
  Every call must be well formed, or the whole reply is a no-op naming the first bad one.

Anything else is a no-op turn with a reason (§5: logged, never re-prompted): prose before or after
the JSON, a field besides ``tool``/``args``, a ``tool`` that is missing or not a string, JSON
nested deeper than ``jsonsafe.MAX_DEPTH`` levels (measured before decoding, as ``json`` recurses
once per level).

With ``noop.affordances`` on, a reply whose first call names ``ask_user``/``stop`` is a terminal
outcome in the spec's exact shape; a reserved name in a later position is deferred like any other
call (it never halts a turn whose first call is a tool). Calls after a terminal come back in
``deferred`` too, so the loop can record them. With affordances off the reserved names are
ordinary calls, which validation rejects as unknown tools.

``parse_reply`` is total: it never raises, whatever the text, and takes time linear in its
length. Its result, ``Parsed``, is a tagged union on ``kind``: ``ParsedCall`` (``call``,
``deferred``), ``ParsedTerminal`` (``outcome``, ``deferred``) or ``ParsedNoop`` (``reason``); each
variant holds only its own fields.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from .. import jsonsafe
from ..types import Outcome, TerminalOutcome, ToolCall
from .registry import RESERVED

_FENCE = "```"
_FENCE_INFO = re.compile(r"(?:json)?[ \t]*")  # what may follow the opening fence on its line
_SPACE = re.compile(r"\s*")
_DECODER = json.JSONDecoder()
_FIELDS = ("tool", "args")
# Each terminal outcome, by its reserved tool name, and the argument it carries (spec §3.3).
_TERMINAL: dict[str, tuple[TerminalOutcome, str]] = {
    "ask_user": ("ask_user", "question"),
    "stop": ("stop", "reason"),
}
# The reply shape above as a JSON schema, for servers that constrain their output to one
# (structured output on): the shape only, not which tool or arguments, so validation still
# has every call to judge.
REPLY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"tool": {"type": "string"}, "args": {"type": "object"}},
    "required": ["tool", "args"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class ParsedCall:
    """A reply whose first call is a tool call; ``deferred``: the calls after it, in order."""

    kind: Literal["call"] = field(default="call", init=False)
    call: ToolCall
    deferred: tuple[ToolCall, ...] = ()


@dataclass(frozen=True)
class ParsedTerminal:
    """A reply whose first call is ``ask_user``/``stop`` (affordances on), as its outcome."""

    kind: Literal["terminal"] = field(default="terminal", init=False)
    outcome: Outcome
    deferred: tuple[ToolCall, ...] = ()


@dataclass(frozen=True)
class ParsedNoop:
    """A reply that is no call at all: a no-op turn, and why."""

    kind: Literal["noop"] = field(default="noop", init=False)
    reason: str


Parsed: TypeAlias = ParsedCall | ParsedTerminal | ParsedNoop


class _NoOp(Exception):
    pass


def parse_reply(text: str, *, serialize: bool = True, affordances: bool = True) -> Parsed:
    """Parse one model reply. ``serialize`` does not change the result: the loop decides whether
    ``deferred`` runs (gate ``serialize`` off) or is only recorded, so the order is always kept."""
    del serialize
    try:
        items = _values(text)
        calls = [_call(item, i, len(items)) for i, item in enumerate(items)]
    except _NoOp as exc:
        return ParsedNoop(str(exc))
    first, rest = calls[0], tuple(calls[1:])
    if affordances and first.tool in RESERVED:
        return ParsedTerminal(terminal(first), rest)
    return ParsedCall(first, rest)


def terminal(call: ToolCall) -> Outcome:
    """``{"outcome": "ask_user", "question": ...}`` / ``{"outcome": "stop", "reason": ...}``."""
    outcome, key = _TERMINAL[call.tool]
    value = call.args.get(key)
    return Outcome(outcome, {key: value if isinstance(value, str) else ""})


def _values(text: object) -> list[Any]:
    """The JSON values of the reply, a top-level list spread into its items."""
    if not isinstance(text, str):
        raise _NoOp(f"reply is not text: got {type(text).__name__}")
    body = _unfenced(text.strip()).strip()
    if not body:
        raise _NoOp("reply is not JSON: empty reply")
    try:
        jsonsafe.check_depth(body)
    except jsonsafe.TooDeep as exc:
        raise _NoOp(f"reply is {exc}") from None
    values: list[Any] = []
    pos = 0
    while pos < len(body):
        try:
            value, end = _DECODER.raw_decode(body, pos)
        except json.JSONDecodeError as exc:
            where = "text after the JSON" if values else exc.msg
            raise _NoOp(f"reply is not JSON: {where} (char {exc.pos})") from None
        except ValueError as exc:  # e.g. an integer past Python's digit limit
            raise _NoOp(f"reply is not JSON: {str(exc)[:80]}") from None
        values.extend(value if isinstance(value, list) else [value])
        pos = _skip_space(body, end)
    if not values:
        raise _NoOp("reply is a JSON list of no calls")
    return values


def _unfenced(body: str) -> str:
    """What is inside ONE code fence around ``body``, or ``body`` when there is none.

    The fence is ```` ``` ```` or ```` ```json ```` (spaces or tabs after it) alone on the first
    line, and ```` ``` ```` closing the text; the newline and spaces or tabs before the closing
    fence are the fence's. Found by slicing, not a pattern: the regex this replaces retried the
    trailing spaces at every position, quadratic in a long run of them."""
    if not body.startswith(_FENCE) or not body.endswith(_FENCE):
        return body
    newline = body.find("\n")
    if newline < 0 or newline + 1 > len(body) - len(_FENCE):
        return body
    if not _FENCE_INFO.fullmatch(body, len(_FENCE), newline):
        return body
    inner = body[newline + 1 : len(body) - len(_FENCE)].rstrip(" \t")
    return inner[:-1] if inner.endswith("\n") else inner


def _skip_space(text: str, pos: int) -> int:
    match = _SPACE.match(text, pos)
    assert match is not None  # \s* matches everywhere
    return match.end()


def _call(item: Any, index: int, count: int) -> ToolCall:
    where = f"call {index + 1} of {count}: " if count > 1 else ""
    if not isinstance(item, dict):
        raise _NoOp(f"{where}reply is not a JSON object: got {_json_type(item)}")
    if "tool" not in item:
        raise _NoOp(f'{where}reply has no "tool" field')
    extra = [key for key in item if key not in _FIELDS]
    if extra:
        raise _NoOp(f"{where}reply has an unknown field: {json.dumps(extra[0])[:60]}")
    if not isinstance(item["tool"], str):
        raise _NoOp(f'{where}"tool" is not a string')
    args = item.get("args", {})
    if not isinstance(args, dict):
        raise _NoOp(f'{where}"args" is not an object')
    return ToolCall(item["tool"], args)


def _json_type(value: Any) -> str:
    names = {bool: "boolean", int: "number", float: "number", str: "string", list: "array"}
    return "null" if value is None else names.get(type(value), type(value).__name__)
