"""A run's rejections counted by the rule they broke, and its re-selections.

A rejection's reason names the rule and the offending value (spec §3.2: ``"unknown tool:
bash"``, ``"precondition failed: no evidence for selector repo.memstore.MemStore.remember"``).
Counted by reason, a run that names a hundred selectors would be a hundred rows of one; the
rule is the reason without its value, so the table says which rule a model keeps breaking.
Pure.
"""

from __future__ import annotations

import json
import re
from collections import Counter

from ..types import Trajectory

# (pattern, rule): the first that matches names the rule; a reason none matches is its own rule.
_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"unknown tool: "), "unknown tool"),
    (re.compile(r"unknown arg: "), "unknown arg"),
    (re.compile(r"missing required arg: "), "missing required arg"),
    (re.compile(r"invalid arg: (?P<arg>\w+)"), "invalid arg: {arg}"),
    (re.compile(r"precondition failed: unknown selector "), "unknown selector"),
    (re.compile(r"precondition failed: no evidence for selector "), "no evidence for selector"),
    (re.compile(r"precondition failed: (?P<what>.+)"), "{what}"),
)


def rule_of(reason: str) -> str:
    """``reason`` without its offending value."""
    for pattern, rule in _RULES:
        if found := pattern.match(reason):
            return rule.format(**found.groupdict())
    return reason


def rejections_by_rule(trajectory: Trajectory) -> dict[str, int]:
    counts = Counter(
        rule_of(rejection.reason) for turn in trajectory.turns for rejection in turn.rejections
    )
    return dict(sorted(counts.items()))


def reselections(trajectory: Trajectory) -> int:
    """Selections made again after a rejection (one per turn at most, spec §3.2)."""
    return sum(len(turn.extra_selections) for turn in trajectory.turns)


def shown(counts_json: object) -> str:
    """``{"unknown arg": 1, "no evidence for selector": 18}`` as ``no evidence for selector
    ×18, unknown arg ×1``: the most frequent first."""
    try:
        counts = json.loads(counts_json) if isinstance(counts_json, str) else {}
    except ValueError:
        return ""
    ranked = sorted(counts.items(), key=lambda kv: (-int(kv[1]), kv[0]))
    return ", ".join(f"{rule} \u00d7{int(n)}" for rule, n in ranked)
