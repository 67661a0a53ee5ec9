"""Turn a captured envelope into a ledger Observation: its one-line form and what it cites."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..primitives.envelope import Envelope
from ..types import Observation, ToolCall

_TARGET_ARG = {
    "read_entity": "selector",
    "edit_entity": "selector",
    "search_symbol": "query",
    "search_code": "query",
    "run_test": "target",
}


def target_of(call: ToolCall) -> str:
    arg = _TARGET_ARG.get(call.tool)
    value = call.args.get(arg) if arg else None
    if isinstance(value, str):
        return value
    return "code" if call.tool == "execute" else json.dumps(call.args)[:80]


def summary(tool: str, envelope: Envelope) -> Any:
    """The ``result`` of the one-line ledger form: short, and from the capture only."""
    if not isinstance(envelope, dict) or not envelope.get("ok"):
        error = envelope.get("error") if isinstance(envelope, dict) else None
        return f"error: {error}"
    data = envelope.get("data") or {}
    if tool == "run_test":
        return {"passed": data.get("passed"), "exit_code": data.get("exit_code")}
    if tool == "execute":
        return {"exit_code": data.get("exit_code"), "timed_out": data.get("timed_out")}
    if tool == "edit_entity":
        return "committed" if data.get("committed") else "not committed"
    if tool == "read_entity":
        entity = data.get("entity") or {}
        return f"{entity.get('kind')} {entity.get('signature', '').splitlines()[0] if entity.get('signature') else ''}".strip()
    if tool in ("search_symbol", "search_code"):
        matches = data.get("matches") or []
        names = ", ".join(m.get("selector", "?") for m in matches[:5])
        return f"{len(matches)} matches" + (f": {names}" if names else "")
    return "ok"


def cites(tool: str, envelope: Envelope) -> tuple[str, ...]:
    """Selectors a successful read or search is evidence for (spec §3.2, the evidence gate)."""
    if not isinstance(envelope, dict) or not envelope.get("ok"):
        return ()
    data = envelope.get("data") or {}
    if tool == "read_entity":
        selector = (data.get("entity") or {}).get("selector")
        return (selector,) if isinstance(selector, str) else ()
    if tool in ("search_symbol", "search_code"):
        found = (m.get("selector") for m in data.get("matches") or [] if isinstance(m, dict))
        return tuple(s for s in found if isinstance(s, str))
    return ()


def texts_of(observation: Observation) -> list[str]:
    """The observation strings the symbol trigger scans: captured program output (test output,
    stdout, stderr) and error messages. Not the harness's own one-line summaries of reads and
    searches: those name the very entity just read or found, and would re-search it every turn."""
    data = observation.data if isinstance(observation.data, dict) else {}
    if data.get("trust") == "unverified":  # the capture sits under "data" with a caveat
        captured = data.get("data")
        data = captured if isinstance(captured, dict) else {}
    texts = [data["error"]] if isinstance(data.get("error"), str) else []
    payload = data.get("data")
    inner = payload if isinstance(payload, dict) else {}
    texts += [
        inner[key] for key in ("output", "stdout", "stderr") if isinstance(inner.get(key), str)
    ]
    return texts


def observe(
    call: ToolCall,
    envelope: Envelope,
    observation: Mapping[str, Any],
    trusted: bool,
    caveat: str | None,
) -> Observation:
    return Observation(
        kind=call.tool,
        target=target_of(call),
        result=summary(call.tool, envelope),
        data=observation,
        source="model",
        trust="trusted" if trusted else "unverified",
        caveat=caveat,
        cites=cites(call.tool, envelope),
    )
