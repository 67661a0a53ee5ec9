"""Rows shaped like :func:`pytest_toolpolicy.decide.measures.measures` output, set count by count."""

from __future__ import annotations

import pandas as pd


def mrow(
    *,
    resolved: int = 10,
    n: int = 20,
    cost: float = 0.2,
    tokens_total: int = 20_000,
    necessary: int = 80,
    calls: int = 100,
    sel_correct: int = 80,
    sel_attempted: int = 100,
    labelled_hand: int | None = None,
    labelled_derived: int = 0,
    unlabelled: int = 0,
    **counts: object,
) -> pd.Series:
    """``counts`` adds columns such as ``cost_unknown`` and ``model``; a row without them reads
    as one from before they existed. Every instance has a hand-written label unless
    ``labelled_hand``/``labelled_derived``/``unlabelled`` say otherwise."""
    return pd.Series(
        {
            **counts,
            "resolved": resolved,
            "n": n,
            "cost": cost,
            "tokens_total": tokens_total,
            "tokens": tokens_total / n if n else float("nan"),
            "necessary": necessary,
            "calls": calls,
            "sel_correct": sel_correct,
            "sel_attempted": sel_attempted,
            "labelled_hand": n if labelled_hand is None else labelled_hand,
            "labelled_derived": labelled_derived,
            "unlabelled": unlabelled,
        }
    )
