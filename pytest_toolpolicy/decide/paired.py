"""Pair two variants' items by instance and compute the statistics shown beside the §9 rules,
or say why no pair exists."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import pandas as pd

from .fmt import plural
from .sample import OWN, RUN_KEYS, measured, resolved_as_measured, trials_of
from .stats import mcnemar_exact, paired_bootstrap
from .variants import repo_of

# A run is identified by its instance, seed and trial; anything else differing is the variant.
PAIR_KEYS = list(RUN_KEYS)


@dataclass(frozen=True)
class Paired:
    n_pairs: int  # (instance, trial) pairs: every trial counts
    b: int  # reference resolved, variant not
    c: int  # variant resolved, reference not
    mcnemar_p: float
    cost_ci: tuple[float, float]  # 95% CI of mean per-pair (variant − reference) $
    tokens_ci: tuple[float, float]  # 95% CI of mean per-pair (variant − reference) tokens
    resolve_ci: tuple[float, float] = (float("nan"), float("nan"))  # of the resolve difference
    clustered_by: str | None = None  # "repo", "instance" (trials), or None: pairs resampled


def paired(results: pd.DataFrame, variant: str, reference: str, seed: int = 0) -> Paired:
    """Only instances measured in both variants count (an endpoint's model error as not
    resolved, as in the measures), so each pair is a like for like comparison; unmatched items
    still count in the measures but not here. With several repositories the intervals resample
    whole repositories; with several trials and one repository, whole instances."""
    ok = results[measured(results)]
    ok = ok.assign(trial=trials_of(ok), resolved=resolved_as_measured(ok))
    if "repo" not in ok or ok["repo"].isna().any():
        ok = ok.assign(repo=ok["instance_id"].map(repo_of))
    cols = [*PAIR_KEYS, "repo", "resolved", "cost_usd", "tokens"]
    ours = ok.loc[ok["variant"] == variant, cols]
    theirs = ok.loc[ok["variant"] == reference, cols].drop(columns="repo")
    both = ours.merge(theirs, on=PAIR_KEYS, suffixes=("", "_ref")).sort_values(PAIR_KEYS)
    won = both["resolved"].astype(bool)
    had = both["resolved_ref"].astype(bool)
    b, c = int((had & ~won).sum()), int((won & ~had).sum())
    by = None
    if both["repo"].nunique() > 1:
        by = "repo"
    elif both["trial"].nunique() > 1:
        by = "instance"
    clusters = None if by is None else both["repo" if by == "repo" else "instance_id"]

    def interval(column: str) -> tuple[float, float]:
        return paired_bootstrap(
            both[column].astype(float),
            both[f"{column}_ref"].astype(float),
            seed=seed,
            clusters=clusters,
        )

    return Paired(
        n_pairs=len(both),
        b=b,
        c=c,
        mcnemar_p=mcnemar_exact(b, c),
        cost_ci=interval("cost_usd"),
        tokens_ci=interval("tokens"),
        resolve_ci=interval("resolved"),
        clustered_by=by,
    )


NOTHING_MEASURED = "no decision: no item was measured"
# The causes an error text names (run/row.py, the session's harness faults: schema.py's "error";
# "model error" in results saved when an endpoint's error left its item unmeasured).
CAUSES = ("model error", "harness fault", "infra error")


def _cause(status: object, error: object) -> str:
    text = error if isinstance(error, str) else ""
    found = next((cause for cause in CAUSES if text.startswith(cause)), None)
    return found or ("infra error" if status == "infra_error" else "error")


def failure_causes(rows: pd.DataFrame) -> str:
    """The unmeasured items of ``rows`` by cause, most common first: "3 model errors, 1 infra error"."""
    failed = rows[~measured(rows)]
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
