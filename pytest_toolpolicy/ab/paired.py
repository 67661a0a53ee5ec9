"""Pair two variants' items by instance and compute the statistics shown beside the §9 rules."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from .stats import mcnemar_exact, paired_bootstrap

# A run is identified by its instance and seed; anything else differing is the variant itself.
PAIR_KEYS = ["instance_id", "seed"]


@dataclass(frozen=True)
class Paired:
    n_pairs: int
    b: int  # reference resolved, variant not
    c: int  # variant resolved, reference not
    mcnemar_p: float
    cost_ci: tuple[float, float]  # 95% CI of mean per-instance (variant − reference) $
    tokens_ci: tuple[float, float]  # 95% CI of mean per-instance (variant − reference) tokens


def paired(results: pd.DataFrame, variant: str, reference: str, seed: int = 0) -> Paired:
    """Only instances run without a harness fault in both variants count, so each pair is a like
    for like comparison; unmatched items still count in the measures but not here."""
    ok = results[results["status"] == "ok"]
    cols = [*PAIR_KEYS, "resolved", "cost_usd", "tokens"]
    ours = ok.loc[ok["variant"] == variant, cols]
    theirs = ok.loc[ok["variant"] == reference, cols]
    both = ours.merge(theirs, on=PAIR_KEYS, suffixes=("", "_ref")).sort_values(PAIR_KEYS)
    won = both["resolved"].astype(bool)
    had = both["resolved_ref"].astype(bool)
    b, c = int((had & ~won).sum()), int((won & ~had).sum())
    return Paired(
        n_pairs=len(both),
        b=b,
        c=c,
        mcnemar_p=mcnemar_exact(b, c),
        cost_ci=paired_bootstrap(both["cost_usd"], both["cost_usd_ref"], seed=seed),
        tokens_ci=paired_bootstrap(both["tokens"], both["tokens_ref"], seed=seed),
    )
