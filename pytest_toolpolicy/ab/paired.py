"""Pair two variants' items by instance and compute the statistics shown beside the §9 rules,
or say why no pair exists."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import pandas as pd

from .fmt import plural
from .measures import OWN
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


NOTHING_MEASURED = "no decision: no item was measured"
# The causes an error text names (row.py, the session's harness faults: schema.py's "error").
CAUSES = ("model error", "harness fault", "infra error")


def _cause(status: object, error: object) -> str:
    text = error if isinstance(error, str) else ""
    found = next((cause for cause in CAUSES if text.startswith(cause)), None)
    return found or ("infra error" if status == "infra_error" else "error")


def failure_causes(rows: pd.DataFrame) -> str:
    """The unmeasured items of ``rows`` by cause, most common first: "3 model errors, 1 infra error"."""
    failed = rows[rows["status"] != "ok"]
    causes = Counter(_cause(s, e) for s, e in zip(failed["status"], failed["error"], strict=True))
    return ", ".join(plural(count, cause) for cause, count in causes.most_common())


def unpaired_reason(results: pd.DataFrame, m: pd.DataFrame) -> tuple[str, str | None]:
    """The verdict of a table whose shared sample is empty (``m`` is :func:`.measures.measures`),
    and, when nothing at all was measured, the per-arm causes to show beside it.

    The sample is shared by every variant, so every variant's count is named: an ablation that
    failed on every item empties the policy-vs-current comparison too.
    """
    empty, measured = [], []
    for variant, row in m.iterrows():
        causes = failure_causes(results[results["variant"] == variant])
        n, failed = int(row["n"]), int(row["n_errors"])
        if not n:
            empty.append(f"every {variant} item failed ({causes})")
            continue
        own = " on its own" if row["sample"] == OWN else ""
        measured.append(
            f"{variant} measured {plural(n, 'item')}{own}"
            + (f", {failed} failed ({causes})" if failed else "")
        )
    clauses = empty + measured  # the cause first, then what was measured regardless
    if not m["n"].any():
        # Kept verbatim: it is the line the terminal summary and the CI gate have always shown.
        return NOTHING_MEASURED, "; ".join(clauses)
    where = "both arms" if len(m) == 2 else "every variant"
    lead = "" if (m["n"] == 0).any() else f"no instance was measured in {where}; "
    return f"no paired verdict: {lead}{'; '.join(clauses)}", None
