"""Validation of a model-requested call (spec §3.2): three rules, in order, each with its gate.

1. registry (``validate.registry``): ``"unknown tool: <name>"``.
2. args (``validate.args``): the exact reasons of ``check_args``. The spec says numeric args are
   "clamped to their cap range" but also "out-of-cap → reject", and its own example rejects
   ``"invalid arg: window (expected int 1..100, got 0)"``: an out-of-range number is rejected,
   never silently clamped, so the model sees what it asked for was wrong.
3. preconditions, per tool; the evidence gate on ``edit_entity`` is ``validate.evidence``.

A gate that is off skips its rule and the later rules still run. Without rule 2 the args are
unchecked, so a precondition whose value has the wrong type is simply not checked further (the
primitive then answers with a failed envelope). Without rule 1 a call to a tool that is not in
the registry has no schema to check, so it passes; the toolbox answers ``unknown tool``.
``validate`` never raises, whatever the call.
"""

from __future__ import annotations

from typing import Any

from ..primitives.codeindex import CodeIndex
from ..primitives.specs import check_args
from ..types import Observation, Rejection, ToolCall
from .config import PolicyConfig
from .ledger import Ledger
from .registry import REGISTRY


def validate(
    call: ToolCall, ledger: Ledger, index: CodeIndex, config: PolicyConfig
) -> Rejection | None:
    """The first rule ``call`` breaks, as a rejection with the spec's reason; None if it passes."""
    tool, args = call.tool, call.args
    if not isinstance(tool, str) or tool not in REGISTRY:
        if config.on("validate.registry"):
            return Rejection(str(tool), f"unknown tool: {tool}")
        return None
    if not isinstance(args, dict):
        # parse_reply never builds one; a hand-made ToolCall still must not crash rule 2 or 3.
        return Rejection(tool, f"invalid arg: args (expected object, got {type(args).__name__})")
    if config.on("validate.args"):
        checked, reason = check_args(tool, args)
        if checked is None:
            return Rejection(tool, reason or "invalid args")
        args = checked
    reason = _precondition(tool, args, ledger, index, config)
    return Rejection(tool, reason) if reason else None


def _precondition(
    tool: str, args: dict[str, Any], ledger: Ledger, index: CodeIndex, config: PolicyConfig
) -> str | None:
    if tool == "read_entity":
        selector = args.get("selector")
        if isinstance(selector, str) and index.get(selector) is None:
            return f"precondition failed: unknown selector {selector}"
    elif tool in ("search_symbol", "search_code"):
        if _blank(args.get("query")):
            return "precondition failed: empty query"
    elif tool == "edit_entity":
        selector = args.get("selector")
        if (
            config.on("validate.evidence")
            and isinstance(selector, str)
            and selector not in ledger.evidence
        ):
            return f"precondition failed: no evidence for selector {selector}"
    elif tool == "run_test":
        if _blank(args.get("target")):
            return "precondition failed: empty target"
    elif tool == "execute" and _blank(args.get("code")):
        # Whitespace-only code is an empty program: nothing to run, so nothing to allow.
        return "precondition failed: empty code"
    return None


def _blank(value: Any) -> bool:
    return isinstance(value, str) and not value.strip()


def rejection_observation(rejection: Rejection) -> Observation:
    """A rejection as the ledger records it; ``data`` is the spec's exact rejection shape."""
    return Observation(
        kind="rejected",
        target=rejection.tool,
        result=rejection.reason,
        data=rejection.record(),
        source="harness",
    )
