"""Notes under the verdicts: which gold labels selection accuracy was scored on (when any was not
hand-written), and each variant's spread over the trials (when there were several)."""

from __future__ import annotations

import pandas as pd

from .cells import count, num, trials

LABEL_COUNTS = ("labelled_hand", "labelled_derived", "unlabelled")


def label_lines(table: pd.DataFrame) -> list[str]:
    """Which gold labels selection accuracy was scored on, when any was not hand-written."""
    if not set(LABEL_COUNTS) <= set(table.columns):
        return []
    counts = {str(v): tuple(count(r[c]) for c in LABEL_COUNTS) for v, r in table.iterrows()}
    if not any(derived or none for _, derived, none in counts.values()):
        return []

    def said(hand: int, derived: int, none: int) -> str:
        return (
            f"{derived} instances scored on labels derived from the gold patch"
            f" (gold_labels/FORMAT.md), {hand} on hand-written ones, {none} without a label"
            " (left out of selection accuracy)"
        )

    if len(set(counts.values())) == 1:
        return ["gold labels: " + said(*next(iter(counts.values())))]
    return ["gold labels:", *(f"  {variant}: {said(*c)}" for variant, c in counts.items())]


def trial_lines(table: pd.DataFrame) -> list[str]:
    """With several trials: each variant's spread, the standard deviation over trials."""
    k = trials(table)
    if k <= 1:
        return []
    lines = [
        f"trials: {k} per instance; pass^k = instances resolved in all {k}; spread = sd over trials:"
    ]
    for variant, r in table.iterrows():
        spread = ", ".join(
            f"{name} \u00b1{num(r[f'sd_{name}'], fmt)}"
            for name, fmt in (
                ("resolve", ".3f"),
                ("cost", ".4f"),
                ("tokens", ".0f"),
                ("call_precision", ".3f"),
                ("selection_accuracy", ".3f"),
            )
        )
        lines.append(f"  {variant}: {spread}")
    return lines
