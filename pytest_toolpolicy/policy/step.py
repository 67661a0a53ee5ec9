"""One model reply through parse → validate → execute → trust gate, outside any loop.

What ``toolpolicy call`` runs: no model is asked anything (so there is no re-selection), and the
ledgers travel in and out, so a read in one call is evidence for an edit in the next.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from ..primitives.toolbox import Toolbox
from .config import PolicyConfig
from .ledger import Ledger
from .loop import execute_call
from .parse import parse_reply
from .validate import rejection_observation, validate


def step(
    reply: str, toolbox: Toolbox, ledger: Ledger, config: PolicyConfig
) -> tuple[dict[str, Any], Ledger]:
    """The printed result is exactly one of: a terminal outcome (``{"outcome": ...}``), a
    rejection (``{"ok": false, "rejected": true, ...}``), a no-op (``{"noop": true, "reason"}``),
    or ``{"observation": ..., "triggers": [...], "deferred": [...]}`` for an executed call."""
    parsed = parse_reply(
        reply, serialize=config.on("serialize"), affordances=config.on("noop.affordances")
    )
    if parsed.kind == "noop":
        return {"noop": True, "reason": parsed.reason}, ledger
    if parsed.kind == "terminal":
        return parsed.outcome.record(), ledger
    rejection = validate(parsed.call, ledger, toolbox.index, config)
    if rejection is not None:
        return rejection.record(), ledger.append(rejection_observation(rejection))
    ledger, observations, _ = execute_call(toolbox, ledger, parsed.call, config)
    result = {
        "observation": observations[0].data,
        "triggers": [o.data for o in observations[1:]],
        "deferred": [asdict(call) for call in parsed.deferred],
    }
    return result, ledger
