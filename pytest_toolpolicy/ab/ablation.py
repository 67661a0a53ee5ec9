"""Spec §9's ablation rule: a gate is deleted iff removing it changes none of the five measures.

"No change" is exact: Δresolve = 0, |Δcost| ≤ 5%, |Δtokens| ≤ 5% (relative to the full policy),
Δcall_precision = 0, Δselection_accuracy = 0, all as Fractions. A NaN measure cannot show "no
change", so its gate is kept — deleting a gate needs positive evidence that it does nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import pandas as pd

from .fmt import percent, signed
from .measures import MEASURES, exact

NOISE = Fraction(5, 100)  # cost and tokens may move this much, relative, and still be "no change"
RELATIVE = ("cost", "tokens")


@dataclass(frozen=True)
class Ablation:
    gate: str
    delete: bool
    changed: list[str] = field(default_factory=list)
    detail: str = ""  # the changed measures and by how much, e.g. "resolve −0.15, tokens +12%"

    @property
    def verdict(self) -> str:
        return "delete" if self.delete else f"keep ({self.detail})"


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


def no_change_flags(ablated: pd.Series, full: pd.Series) -> dict[str, bool]:
    """Per measure: True iff removing the gate left it unchanged under the rule."""
    return {m: _change(m, exact(ablated, m), exact(full, m)) is None for m in MEASURES}


def ablate(gate: str, ablated: pd.Series, full: pd.Series) -> Ablation:
    """Judge one ``policy-no:<gate>`` row of :func:`measures` against the full ``policy`` row."""
    changes = {m: _change(m, exact(ablated, m), exact(full, m)) for m in MEASURES}
    moved = {m: text for m, text in changes.items() if text is not None}
    return Ablation(gate, not moved, list(moved), ", ".join(moved.values()))
