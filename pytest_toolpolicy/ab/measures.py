"""Spec §9's five measures (plus correct abstention), one row per variant.

All variants are measured on the same instances: one whose item failed in any variant is
excluded from every variant (and counted), so no comparison mixes two different samples. When that
leaves a variant nothing (one arm failed on every item, or the arms failed on different instances),
its row shows its own measured items instead, marked ``sample == "own"``: what it did is still
shown, and :mod:`.table` gives no verdict on such a row.

The rows keep the integer counts beside each ratio so the decision and ablation rules can compare
exact fractions: a threshold such as "≥ current − 0.03" must not flip on a float rounding error.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pandas as pd

from .schema import variant_order

MEASURES = ("resolve", "cost", "tokens", "call_precision", "selection_accuracy")
# Which items a row measures: the sample shared by every variant; this variant's own measured items
# (the shared sample left it none); or none at all (every item failed).
SHARED, OWN, NONE = "shared", "own", "none"
COLUMNS = (
    "arm", "gate", "model", "sample", "n", "n_errors", "cost_unknown",
    "resolved", "resolve", "cost", "tokens", "tokens_total",
    "calls", "necessary", "call_precision", "sel_correct", "sel_attempted", "selection_accuracy",
    "underspecified", "abstained_correct", "abstention",
    "cf_cost_usd", "cf_tokens", "cf_model_calls", "cf_tool_executions",
    "replies", "replies_parsed",
)  # fmt: skip


def to_fraction(x: float | None) -> Fraction | None:
    """The decimal a float was written as (``0.3`` → 3/10, not 5404319552844595/2**54); None for NaN."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    return Fraction(repr(float(x)))


def _ratio(num: int, den: int) -> float:
    return num / den if den else math.nan


def _mean_cost(costs: pd.Series) -> float:
    # Summed as exact decimals so three items at $0.1 average to exactly 0.1, which the decision
    # rule then reads back through repr(); one unpriced item makes the whole mean unknown.
    if costs.empty or costs.isna().any():
        return math.nan
    return float(sum((Fraction(repr(float(c))) for c in costs), Fraction(0)) / len(costs))


def incomplete_instances(results: pd.DataFrame) -> set[tuple[str, object]]:
    """(instance, seed) pairs with an item that was not measured (a harness fault, a model
    error); the same pairing as the paired statistics."""
    if not len(results):
        return set()
    failed = results[results["status"] != "ok"]
    return set(zip(failed["instance_id"], failed["seed"], strict=True))


def _keys(rows: pd.DataFrame) -> pd.Series:
    return pd.Series(list(zip(rows["instance_id"], rows["seed"], strict=True)), index=rows.index)


def _variant_row(rows: pd.DataFrame, excluded: set[tuple[str, object]]) -> dict[str, object]:
    # Every variant is measured on the same instances (spec §9: the identical sample), so an
    # instance with an unmeasured item anywhere is left out of all of them.
    ok = rows[(rows["status"] == "ok") & ~_keys(rows).isin(excluded)]
    n = len(ok)
    resolved = int(ok["resolved"].sum())
    calls, necessary = int(ok["calls"].sum()), int(ok["necessary_calls"].sum())
    correct, attempted = int(ok["selection_correct"].sum()), int(ok["selection_attempted"].sum())
    under = ok["underspecified"].astype(bool)
    abstained_correct = int((under & ok["abstained"].astype(bool)).sum())
    tokens_total = int(ok["tokens"].sum())
    gate = rows["gate"].dropna()
    models = rows["model"].dropna().unique()
    return {
        "arm": rows["arm"].iloc[0],
        "gate": gate.iloc[0] if len(gate) else None,
        # The decision names why a cost is unknown, which depends on how the model is priced.
        "model": models[0] if len(models) == 1 else None,
        "sample": SHARED,
        "n": n,
        "n_errors": int((rows["status"] != "ok").sum()),
        "cost_unknown": int(ok["cost_usd"].isna().sum()),
        "resolved": resolved,
        "resolve": _ratio(resolved, n),
        "cost": _mean_cost(ok["cost_usd"]),
        "tokens": _ratio(tokens_total, n),
        "tokens_total": tokens_total,
        "calls": calls,
        "necessary": necessary,
        "call_precision": _ratio(necessary, calls),
        "sel_correct": correct,
        "sel_attempted": attempted,
        "selection_accuracy": _ratio(correct, attempted),
        "underspecified": int(under.sum()),
        "abstained_correct": abstained_correct,
        "abstention": _ratio(abstained_correct, int(under.sum())),
        "cf_cost_usd": float(ok["cf_cost_usd"].sum()),
        "cf_tokens": int(ok["cf_tokens"].sum()),
        "cf_model_calls": int(ok["cf_model_calls"].sum()),
        "cf_tool_executions": int(ok["cf_tool_executions"].sum()),
        # Over every item, failed ones too: how well the model keeps to the arm's call format
        # is a fact about the run, not a measure of the sample.
        **{name: _count(rows, name) for name in ("replies", "replies_parsed")},
    }


def _count(rows: pd.DataFrame, column: str) -> int:
    if column not in rows:  # results saved before the column existed
        return 0
    return int(pd.to_numeric(rows[column], errors="coerce").fillna(0).sum())


def measures(results: pd.DataFrame) -> pd.DataFrame:
    """One row per variant (index ``variant``), in table order: current, policy, ablations."""
    order = variant_order(set(results["variant"])) if len(results) else []
    excluded = incomplete_instances(results)
    rows = [_sampled_row(results[results["variant"] == v], excluded) for v in order]
    return pd.DataFrame(rows, index=pd.Index(order, name="variant"), columns=list(COLUMNS))


def row_of(table: pd.DataFrame, variant: str) -> pd.Series:
    """The row of ``variant`` in a table indexed by variant (:func:`measures`, the decision
    table), which holds one row per variant."""
    found = table.loc[variant]
    if not isinstance(found, pd.Series):  # a label the index repeats selects a frame
        raise ValueError(f"variant {variant!r} has more than one row")
    return found


def _sampled_row(rows: pd.DataFrame, excluded: set[tuple[str, object]]) -> dict[str, object]:
    shared = _variant_row(rows, excluded)
    if shared["n"]:
        return shared
    # The shared sample is empty for this variant: a blank row would hide what it did measure.
    own = _variant_row(rows, set())
    return {**own, "sample": OWN if own["n"] else NONE}


def exact(row: pd.Series, measure: str) -> Fraction | None:
    """A measure of a :func:`measures` row as an exact fraction of its counts; None if undefined."""
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
