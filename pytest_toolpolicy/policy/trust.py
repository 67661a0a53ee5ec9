"""The trust gate (spec §6.2): four deterministic checks on the envelope the harness captured.

A result that passes every enabled check is trusted as-is. Otherwise it is neither dropped nor
absorbed: it becomes ``{"ok": true, "trust": "unverified", "caveat": ..., "data": <envelope>}``,
where the caveat names each failed check (``"<check>: <what>"``, several joined by ``"; "``).
The gate reads only the captured envelope and the validated request, never the model's words.

Checks, each behind its gate, in spec order:

1. ``trust.exit_code`` — ``run_test``: ``exit_code`` is an int, ``passed == (exit_code == 0)``,
   and a timed-out run is not passed. ``run_test`` and ``execute``: ``timed_out`` is a bool and
   ``timed_out ⇒ exit_code != 0`` (the sandbox kills a timed-out process tree, so it cannot
   report success). Envelopes whose ``data`` is not an object (nothing ran) are not checked.
2. ``trust.schema`` — the envelope is an object with exactly ``ok``/``error``/``data``; a failed
   one (``ok: false``) carries a non-empty string error; an ok one has ``error: null`` and ``data``
   of the tool's declared shape (``SHAPES`` below: required keys and types; extra keys allowed).
3. ``trust.round_trip`` — every ``search_symbol`` match contains *the query token* in its
   ``selector + " " + signature``, case-insensitively. The query token is the last dotted
   component of the requested query (``memstore.MemStore.remember`` → ``remember``). The selector
   is the match's qualified name (its last component is the short name); it is used rather than
   the short name alone because the primitive's substring tier rightly returns members of a
   matching container (``cart`` → ``shop.cart.Cart.add``). A committed ``edit_entity`` reports
   ``matches == 1``.
4. ``trust.lint`` — a committed ``edit_entity`` carries the harness's lint verdict: ``lint`` with
   a bool ``clean``, a list ``errors``, and ``clean == (errors == [])``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypedDict

from ..types import ToolCall
from .config import PolicyConfig
from .shapes import SHAPES, is_kind, mismatch, show


class Unverified(TypedDict):
    """The wrapper a result that failed a check becomes: the capture kept, with the caveat."""

    ok: Literal[True]
    trust: Literal["unverified"]
    caveat: str
    data: Mapping[str, Any]  # the envelope as captured


@dataclass(frozen=True)
class Verdict:
    trusted: bool
    caveat: str | None
    observation: Mapping[str, Any]  # the envelope verbatim, or the ``Unverified`` wrapper


def trust_gate(call: ToolCall, envelope: Mapping[str, Any], config: PolicyConfig) -> Verdict:
    """``envelope`` is what the dispatch returned: an ``Envelope`` by its type, but checked as
    any mapping, since checking its shape is this gate's job (a tool wrapper may have bent it)."""
    failed = [
        f"{name}: {why}"
        for gate, name, check in _CHECKS
        if config.on(gate) and (why := check(call, envelope))
    ]
    if not failed:
        return Verdict(trusted=True, caveat=None, observation=envelope)
    caveat = "; ".join(failed)
    wrapped: Unverified = {"ok": True, "trust": "unverified", "caveat": caveat, "data": envelope}
    return Verdict(trusted=False, caveat=caveat, observation=wrapped)


def _data(envelope: Any) -> dict[str, Any] | None:
    data = envelope.get("data") if isinstance(envelope, dict) else None
    return data if isinstance(data, dict) else None


def _check_exit_code(call: ToolCall, envelope: Any) -> str | None:
    data = _data(envelope)
    if call.tool not in ("run_test", "execute") or data is None:
        return None
    code, timed_out = data.get("exit_code"), data.get("timed_out")
    if not is_kind("int", code):
        return f"{call.tool} exit_code is {show(code)}, not an int"
    if not isinstance(timed_out, bool):
        return f"{call.tool} timed_out is {show(timed_out)}, not a bool"
    if call.tool == "run_test":
        passed = data.get("passed")
        if not isinstance(passed, bool):
            return f"passed is {show(passed)}, not a bool"
        if passed != (code == 0):
            return f"passed={show(passed)} but exit_code={code}"
        if passed and timed_out:
            return "passed=true but timed_out=true"
    if timed_out and code == 0:
        return "timed_out=true but exit_code=0"
    return None


def _check_schema(call: ToolCall, envelope: Any) -> str | None:
    if not isinstance(envelope, dict):
        return f"envelope is {type(envelope).__name__}, not an object"
    if set(envelope) != {"ok", "error", "data"}:
        return f"envelope keys are {sorted(map(str, envelope))}, expected ['data', 'error', 'ok']"
    ok, error = envelope["ok"], envelope["error"]
    if not isinstance(ok, bool):
        return f"envelope ok is {show(ok)}, not a bool"
    if not ok:
        return None if isinstance(error, str) and error else "failed envelope has no error string"
    if error is not None:
        return f"ok envelope has error {show(error)}"
    shape = SHAPES.get(call.tool)
    if shape is None:
        return f"no declared shape for tool {call.tool!r}"
    return mismatch(envelope["data"], shape, f"{call.tool} data")


def _check_round_trip(call: ToolCall, envelope: Any) -> str | None:
    data = _data(envelope)
    if data is None:
        return None
    if call.tool == "search_symbol":
        query = call.args.get("query", data.get("query"))
        token = str(query or "").strip().rsplit(".", 1)[-1].lower()
        for match in data.get("matches") or []:
            match = match if isinstance(match, dict) else {}
            hay = f"{match.get('selector', '')} {match.get('signature', '')}".lower()
            if token not in hay:
                return f"match {match.get('selector', '?')} lacks query token {token!r}"
    if call.tool == "edit_entity" and data.get("committed") is True:
        matches = data.get("matches")
        if not (is_kind("int", matches) and matches == 1):
            return f"committed edit reports matches={show(matches)}, expected 1"
    return None


def _check_lint(call: ToolCall, envelope: Any) -> str | None:
    data = _data(envelope)
    if call.tool != "edit_entity" or data is None or data.get("committed") is not True:
        return None
    lint = data.get("lint")
    if not isinstance(lint, dict):
        return "committed edit has no lint verdict"
    clean, errors = lint.get("clean"), lint.get("errors")
    if not isinstance(clean, bool) or not isinstance(errors, list):
        return "lint verdict lacks a bool 'clean' and a list 'errors'"
    if clean != (errors == []):
        return f"lint clean={show(clean)} but {len(errors)} error(s)"
    return None


_CHECKS: tuple[tuple[str, str, Callable[[ToolCall, Any], str | None]], ...] = (
    ("trust.exit_code", "exit_code", _check_exit_code),
    ("trust.schema", "schema", _check_schema),
    ("trust.round_trip", "round_trip", _check_round_trip),
    ("trust.lint", "lint", _check_lint),
)
