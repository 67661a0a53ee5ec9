"""How often each gate acted in a policy run, read off its trajectory.

The ablation rule deletes a gate whose removal changes none of the five measures. A gate that
never acted in a session (a retrieval fallback the keyword map never left room for, a trust check
no tool result failed) cannot change them, so "no change" there is no evidence that it does
nothing: the table says how often the gate acted beside its verdict, and why it could not.

An act is the gate doing what switching it off would undo:

- ``trigger.*``: a triggered observation of its kind (lint, test, symbol);
- ``validate.registry`` / ``.args`` / ``.evidence``: a rejection for its rule (the first and the
  second of a turn each count; read from the turn's ``rejections``, not its observations);
- ``noop.affordances``: the run ended on ``ask_user`` or ``stop``;
- ``serialize``: a turn whose extra calls were deferred;
- ``retrieve.top5``: a selection shown fewer than all six tools;
- ``retrieve.embed``: a selection whose tools the embedding fallback ranked;
- ``trust.*``: an observation its check left unverified.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from ..policy.config import GATES
from ..policy.registry import TOOL_NAMES
from ..types import Trajectory

_TRIGGERS = {"trigger.lint": "lint", "trigger.test": "test", "trigger.symbol": "symbol"}
_REJECTIONS = {
    "validate.registry": ("unknown tool:",),
    "validate.args": ("unknown arg:", "missing required arg:", "invalid arg:"),
    "validate.evidence": ("precondition failed: no evidence",),
}
_TRUST = {
    "trust.exit_code": "exit_code:",
    "trust.schema": "schema:",
    "trust.round_trip": "round_trip:",
    "trust.lint": "lint:",
}
UNAVAILABLE = "embedder unavailable"


def acts(trajectory: Trajectory) -> dict[str, int]:
    """Each gate's acts in one run (every gate named, 0 where it never acted)."""
    count: Counter[str] = Counter(dict.fromkeys(GATES, 0))
    if trajectory.outcome.outcome in ("ask_user", "stop"):
        count["noop.affordances"] += 1
    for turn in trajectory.turns:
        count["serialize"] += bool(turn.deferred)
        for shown in turn.retrieval:
            count["retrieve.top5"] += len(shown.get("tools") or ()) < len(TOOL_NAMES)
            count["retrieve.embed"] += shown.get("fallback") == "embed"
        # Each rejection once: the ledger's ``rejected`` observations record the same ones.
        for rejection in turn.rejections:
            for gate, prefixes in _REJECTIONS.items():
                count[gate] += rejection.reason.startswith(prefixes)
        for observation in turn.observations:
            if observation.source == "trigger":
                for gate, kind in _TRIGGERS.items():
                    count[gate] += observation.kind == kind
            if observation.trust == "unverified" and observation.caveat:
                checks = observation.caveat.split("; ")
                for gate, name in _TRUST.items():
                    count[gate] += any(check.startswith(name) for check in checks)
    return dict(count)


def blocked(trajectory: Trajectory) -> dict[str, int]:
    """Times a gate was on and had its chance but could not act: the embedding fallback was
    reached and its model could not be loaded."""
    out = {"retrieve.embed": 0}
    for turn in trajectory.turns:
        for shown in turn.retrieval:
            out["retrieve.embed"] += UNAVAILABLE in str(shown.get("fallback") or "")
    return out


def total(runs: Iterable[dict[str, int]]) -> dict[str, int]:
    summed: Counter[str] = Counter()
    for run in runs:
        summed.update(run)
    return dict(summed)
