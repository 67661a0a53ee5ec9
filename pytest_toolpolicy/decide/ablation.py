"""Spec §9's ablation rule: a gate is deleted iff removing it changes none of the five measures.

"No change" is exact: Δresolve = 0, |Δcost| ≤ 5%, |Δtokens| ≤ 5% (relative to the full policy),
Δcall_precision = 0, Δselection_accuracy = 0, all as Fractions. A NaN measure cannot show "no
change", so its gate is kept — deleting a gate needs positive evidence that it does nothing.

A measure the harness cannot observe at all on these instances (:func:`.exact.unobservable`:
no gold label for any of them) is treated as the decision rule treats it: not judged. The rule
is applied to the other measures, and the verdict names the measure left out and why — so on
unlabelled instances a gate is deleted iff the four observable measures do not move, rather than
kept forever for want of a label that no run could supply.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import pandas as pd

from .exact import MEASURES, exact, unobservable
from .fmt import percent, signed

NOISE = Fraction(5, 100)  # cost and tokens may move this much, relative, and still be "no change"
RELATIVE = ("cost", "tokens")


@dataclass(frozen=True)
class Ablation:
    gate: str
    delete: bool
    changed: list[str] = field(default_factory=list)
    detail: str = ""  # the changed measures and by how much, e.g. "resolve −0.15, tokens +12%"
    not_judged: dict[str, str] = field(default_factory=dict)  # measure -> why it was left out

    @property
    def judged_note(self) -> str:
        return "; ".join(f"{m} not judged: {why}" for m, why in self.not_judged.items())

    @property
    def verdict(self) -> str:
        if self.delete:
            return f"delete ({self.judged_note})" if self.not_judged else "delete"
        return f"keep ({'; '.join(filter(None, (self.detail, self.judged_note)))})"


def _change(measure: str, ablated: Fraction | None, full: Fraction | None) -> str | None:
    """How ``measure`` moved when the gate was removed, or None if it did not move."""
    if ablated is None or full is None:
        return f"{measure} unknown"
    delta = ablated - full
    if measure not in RELATIVE:
        return None if delta == 0 else f"{measure} {signed(delta, 2, Fraction(0))}"
    if abs(delta) <= NOISE * full:
        return None
    if full == 0:
        return f"{measure} {signed(delta, 4)} from 0"
    rel = delta / full
    return f"{measure} {percent(rel, NOISE if rel > 0 else -NOISE)}"


def _unjudged(ablated: pd.Series, full: pd.Series) -> dict[str, str]:
    """The measures either row cannot observe, with the reason (said once when shared)."""
    out = {}
    for m in MEASURES:
        reasons = dict.fromkeys(r for r in (unobservable(ablated, m), unobservable(full, m)) if r)
        if reasons:
            out[m] = "; ".join(reasons)
    return out


def no_change_flags(ablated: pd.Series, full: pd.Series) -> dict[str, bool | None]:
    """Per measure: True iff removing the gate left it unchanged under the rule; None where the
    measure is not judged."""
    skipped = _unjudged(ablated, full)
    return {
        m: None if m in skipped else _change(m, exact(ablated, m), exact(full, m)) is None
        for m in MEASURES
    }


def ablate(gate: str, ablated: pd.Series, full: pd.Series) -> Ablation:
    """Judge one ``policy-no:<gate>`` row of :func:`measures` against the full ``policy`` row."""
    skipped = _unjudged(ablated, full)
    changes = {
        m: _change(m, exact(ablated, m), exact(full, m)) for m in MEASURES if m not in skipped
    }
    moved = {m: text for m, text in changes.items() if text is not None}
    return Ablation(gate, not moved, list(moved), ", ".join(moved.values()), skipped)
