"""Spec §9's five measures of a row of the table as exact fractions of its counts, and whether
the harness could observe a measure at all on the row's items.

The rows keep the integer counts beside each ratio so the decision and ablation rules can compare
exact fractions: a threshold such as "≥ current − 0.03" must not flip on a float rounding error.
A measure the harness cannot observe at all on a row's items says why (:func:`unobservable`),
which the rules tell apart from a measure that is merely undefined.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pandas as pd

MEASURES = ("resolve", "cost", "tokens", "call_precision", "selection_accuracy")
# The measures that can be structurally unobservable: selection accuracy without gold labels, both
# of these for an external agent that hides its tool calls, and call precision for any external
# agent (its calls cannot be removed one at a time and rerun). Resolve, cost and tokens
# are observable on any measured item, so an unknown one is a failure to show, never "not judged".
MAY_GO_UNOBSERVED = frozenset({"call_precision", "selection_accuracy"})


def to_fraction(x: float | None) -> Fraction | None:
    """The decimal a float was written as (``0.3`` → 3/10, not 5404319552844595/2**54); None for NaN."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    return Fraction(repr(float(x)))


def exact(row: pd.Series, measure: str) -> Fraction | None:
    """A measure of a :func:`.measures.measures` row as an exact fraction of its counts; None if undefined."""
    if measure == "resolve":
        return Fraction(int(row["resolved"]), int(row["n"])) if row["n"] else None
    if measure == "tokens":
        return Fraction(int(row["tokens_total"]), int(row["n"])) if row["n"] else None
    if measure == "call_precision":
        return Fraction(int(row["necessary"]), int(row["calls"])) if row["calls"] else None
    if measure == "selection_accuracy":
        attempted = int(row["sel_attempted"])
        return Fraction(int(row["sel_correct"]), attempted) if attempted else None
    if measure == "cost":
        return to_fraction(row["cost"])
    raise ValueError(f"unknown measure {measure!r}; expected one of {', '.join(MEASURES)}")


def _all(row: pd.Series, column: str) -> bool:
    """Every measured item of the row has the flag the count ``column`` counts."""
    value = row.get(column)
    return value is not None and not pd.isna(value) and int(value) == int(row["n"]) > 0


def unobservable(row: pd.Series, measure: str) -> str | None:
    """Why ``measure`` cannot be observed at all on this row's measured items, as the harness
    states it; None when it can. Not the same as undefined: an arm that made no tool call has
    an undefined call precision it could have had, an instance without a gold label has no
    selection accuracy to observe. Only measures in ``MAY_GO_UNOBSERVED`` can be unobservable."""
    if measure not in MAY_GO_UNOBSERVED or not row.get("n"):
        return None
    agent = row.get("agent") or "the external agent"
    if _all(row, "calls_hidden"):
        return f"{agent} does not show its tool calls to the harness"
    if measure == "call_precision" and _all(row, "precision_hidden"):
        return f"{agent}'s calls cannot be removed one at a time and rerun (no counterfactual)"
    if measure == "selection_accuracy":
        hand, derived = row.get("labelled_hand"), row.get("labelled_derived")
        if hand is None or derived is None or pd.isna(hand) or pd.isna(derived):
            return None  # a row from before the label counts: read as it was then
        if int(hand) + int(derived) == 0:
            return "no gold labels for any of these instances"
    return None
