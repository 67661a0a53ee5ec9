"""Spec §9's five measures (plus correct abstention), one row per variant.

All variants are measured on the same instances: one whose item was not measured in any variant
(a harness fault, grading that could not run here) is excluded from every variant (and counted),
so no comparison mixes two different samples. An item the endpoint ended (status
``model_error``) is measured, as not resolved, at what it spent, so an arm cannot leave the
sample by failing there; each row counts such items (``model_errors``), and the decision rule
gives no verdict where they could change it (:func:`.decision.endpoint_doubt`). When that
leaves a variant nothing (one arm failed on every item, or the arms failed on different instances),
its row shows its own measured items instead, marked ``sample == "own"``: what it did is still
shown, and :mod:`.table` gives no verdict on such a row.

The rows keep the integer counts beside each ratio so the decision and ablation rules can compare
exact fractions: a threshold such as "≥ current − 0.03" must not flip on a float rounding error.

Selection accuracy is scored only on instances with a gold label (hand-written, or derived from the
gold patch) in every variant, so both arms are scored on the same labelled instances; the rows
count the instances scored on each kind of label and those left out for want of one. A measure
the harness cannot observe at all on a row's items says why (:func:`unobservable`), which the
rules tell apart from a measure that is merely undefined.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import pandas as pd

from ..bench.gold_source import DERIVED, HAND, SOURCES
from ..bench.gold_source import NONE as UNLABELLED
from .schema import variant_order

MEASURES = ("resolve", "cost", "tokens", "call_precision", "selection_accuracy")
# The measures that can be structurally unobservable: selection accuracy without gold labels, both
# of these for an external agent that hides its tool calls, and call precision for any external
# agent (its calls cannot be removed one at a time and rerun). Resolve, cost and tokens
# are observable on any measured item, so an unknown one is a failure to show, never "not judged".
MAY_GO_UNOBSERVED = frozenset({"call_precision", "selection_accuracy"})
# Which items a row measures: the sample shared by every variant; this variant's own measured items
# (the shared sample left it none); or none at all (every item failed).
SHARED, OWN, NONE = "shared", "own", "none"
# The statuses a row is measured with: "model_error" as not resolved (the endpoint ended it).
MEASURED = frozenset({"ok", "model_error"})
COLUMNS = (
    "arm", "gate", "model", "sample", "n", "n_errors", "model_errors", "cost_unknown",
    "resolved", "resolve", "cost", "tokens", "tokens_total",
    "calls", "necessary", "calls_hidden", "precision_hidden", "agent", "call_precision", "sel_correct", "sel_attempted", "selection_accuracy",
    "labelled_hand", "labelled_derived", "unlabelled",
    "underspecified", "abstained_correct", "abstention",
    "resolvable", "abstained_false", "false_abstention",
    "instances", "trials", "passed_all", "pass_k",
    "sd_resolve", "sd_cost", "sd_tokens", "sd_call_precision", "sd_selection_accuracy",
    "acts", "blocked", "prompt_tokens", "cached_tokens", "cached_share",
    "cf_cost_usd", "cf_tokens", "cf_model_calls", "cf_tool_executions",
    "replies", "replies_parsed",
)  # fmt: skip
# A run is identified by its instance, seed and trial; anything else differing is the variant.
RUN_KEYS = ("instance_id", "seed", "trial")


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


def trials_of(rows: pd.DataFrame) -> pd.Series:
    """Each row's trial (1 where a row predates trials, or failed before it had one)."""
    if "trial" not in rows:
        return pd.Series(1, index=rows.index)
    return pd.to_numeric(rows["trial"], errors="coerce").fillna(1).astype(int)


def run_keys(rows: pd.DataFrame) -> pd.Series:
    """(instance, seed, trial) of each row: the same pairing as the paired statistics."""
    return pd.Series(
        list(zip(rows["instance_id"], rows["seed"], trials_of(rows), strict=True)),
        index=rows.index,
    )


def measured(rows: pd.DataFrame) -> pd.Series:
    """Which rows are measured (``MEASURED``)."""
    return rows["status"].isin(MEASURED)


def resolved_as_measured(rows: pd.DataFrame) -> pd.Series:
    """Each row's resolved flag as the measures read it: a model_error item never resolved."""
    resolved = pd.to_numeric(rows["resolved"], errors="coerce").fillna(0).astype(bool)
    return resolved & (rows["status"] != "model_error")


def incomplete_instances(results: pd.DataFrame) -> set[tuple[object, ...]]:
    """(instance, seed, trial) runs with an item that was not measured (a harness fault,
    grading that could not run), left out of every variant."""
    if not len(results):
        return set()
    return set(run_keys(results[~measured(results)]))


def _keys(rows: pd.DataFrame) -> pd.Series:
    return run_keys(rows)


def label_sources(rows: pd.DataFrame) -> pd.Series:
    """Each row's ``gold_source``; a row saved before the column existed was scored on a
    hand-written label iff it scored any selection."""
    attempted = pd.to_numeric(rows["selection_attempted"], errors="coerce").fillna(0)
    inferred = pd.Series(UNLABELLED, index=rows.index).where(attempted == 0, HAND)
    if "gold_source" not in rows:
        return inferred
    return rows["gold_source"].where(rows["gold_source"].isin(SOURCES), inferred)


def unlabelled_instances(results: pd.DataFrame) -> set[object]:
    """Instances with a measured item scored on no gold label: left out of every variant's
    selection accuracy, so every variant is scored on the same labelled instances."""
    if not len(results):
        return set()
    ok = results[measured(results)]
    return set(ok.loc[label_sources(ok) == UNLABELLED, "instance_id"])


def _variant_row(
    rows: pd.DataFrame, excluded: set[tuple[object, ...]], unlabelled: set[object]
) -> dict[str, object]:
    # Every variant is measured on the same instances (spec §9: the identical sample), so an
    # instance with an unmeasured item anywhere is left out of all of them.
    ok = rows[measured(rows) & ~_keys(rows).isin(excluded)]
    labelled = ~ok["instance_id"].isin(unlabelled)
    sources = label_sources(ok)
    # An unlabelled instance's selections count in no variant: zeroed here, so the trial
    # spreads below leave it out too. An item the endpoint ended resolved nothing.
    ok = ok.assign(
        selection_correct=ok["selection_correct"].where(labelled, 0),
        selection_attempted=ok["selection_attempted"].where(labelled, 0),
        resolved=resolved_as_measured(ok),
    )
    n = len(ok)
    resolved = int(ok["resolved"].sum())
    calls, necessary = int(ok["calls"].sum()), int(ok["necessary_calls"].sum())
    correct, attempted = int(ok["selection_correct"].sum()), int(ok["selection_attempted"].sum())
    under = ok["underspecified"].astype(bool)
    abstained = ok["abstained"].astype(bool)
    abstained_correct = int((under & abstained).sum())
    # Abstaining where a fix was expected: the same definition, on the resolvable instances.
    abstained_false = int((~under & abstained).sum())
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
        "n_errors": int((~measured(rows)).sum()),
        "model_errors": int((ok["status"] == "model_error").sum()),
        "cost_unknown": int(ok["cost_usd"].isna().sum()),
        "resolved": resolved,
        "resolve": _ratio(resolved, n),
        "cost": _mean_cost(ok["cost_usd"]),
        "tokens": _ratio(tokens_total, n),
        "tokens_total": tokens_total,
        "calls": calls,
        "necessary": necessary,
        # items whose agent hid its tool calls (an external command agent)
        "calls_hidden": int((~ok["calls_observable"].astype(bool)).sum())
        if "calls_observable" in ok
        else 0,
        "agent": _one(rows, "agent"),
        "precision_hidden": int((~ok["call_precision_observable"].astype(bool)).sum())
        if "call_precision_observable" in ok
        else 0,
        # An external agent's: not known, so not a number (never 0 or 1; see unobservable)
        "call_precision": math.nan
        if _hidden(ok, "call_precision_observable")
        else _ratio(necessary, calls),
        "sel_correct": correct,
        "sel_attempted": attempted,
        "selection_accuracy": math.nan
        if _hidden(ok, "calls_observable")
        else _ratio(correct, attempted),
        "labelled_hand": int(ok.loc[labelled & (sources == HAND), "instance_id"].nunique()),
        "labelled_derived": int(ok.loc[labelled & (sources == DERIVED), "instance_id"].nunique()),
        "unlabelled": int(ok.loc[~labelled, "instance_id"].nunique()),
        "underspecified": int(under.sum()),
        "abstained_correct": abstained_correct,
        "abstention": _ratio(abstained_correct, int(under.sum())),
        "resolvable": int((~under).sum()),
        "abstained_false": abstained_false,
        "false_abstention": _ratio(abstained_false, int((~under).sum())),
        **_trial_figures(ok),
        "acts": _summed_json(ok, "gate_acts"),
        "blocked": _summed_json(ok, "gate_blocked"),
        # What a provider's prefix cache served (the cost measure prices it at the cached rate).
        **_cache_share(ok),
        "cf_cost_usd": float(ok["cf_cost_usd"].sum()),
        "cf_tokens": int(ok["cf_tokens"].sum()),
        "cf_model_calls": int(ok["cf_model_calls"].sum()),
        "cf_tool_executions": int(ok["cf_tool_executions"].sum()),
        # Over every item, failed ones too: how well the model keeps to the arm's call format
        # is a fact about the run, not a measure of the sample.
        **{name: _count(rows, name) for name in ("replies", "replies_parsed")},
    }


def _trial_figures(ok: pd.DataFrame) -> dict[str, object]:
    """With several trials per instance: pass^k (the share of instances every one of whose K
    trials resolved) and each measure's spread (the standard deviation of its value over the
    trials, each trial taken as a run of the whole sample); NaN with one trial."""
    trial = trials_of(ok)
    k = int(trial.max()) if len(ok) else 1
    by_instance = ok.assign(_trial=trial).groupby("instance_id")
    instances = int(by_instance.ngroups)
    passed_all = int(by_instance["resolved"].apply(lambda r: bool(r.astype(bool).all())).sum())
    out: dict[str, object] = {
        "instances": instances,
        "trials": k,
        "passed_all": passed_all,
        "pass_k": _ratio(passed_all, instances) if k > 1 else math.nan,
    }
    for name in MEASURES:
        out[f"sd_{name}"] = math.nan
    if k > 1:
        per_trial = [_variant_row_plain(ok[trial == t]) for t in sorted(set(trial))]
        for name in MEASURES:
            values = pd.Series([row[name] for row in per_trial], dtype=float).dropna()
            out[f"sd_{name}"] = float(values.std(ddof=1)) if len(values) > 1 else math.nan
    return out


def _variant_row_plain(ok: pd.DataFrame) -> dict[str, float]:
    """The five measures of measured rows, for one trial's spread."""
    n = len(ok)
    return {
        "resolve": _ratio(int(ok["resolved"].sum()), n),
        "cost": _mean_cost(ok["cost_usd"]),
        "tokens": _ratio(int(ok["tokens"].sum()), n),
        "call_precision": _ratio(int(ok["necessary_calls"].sum()), int(ok["calls"].sum())),
        "selection_accuracy": _ratio(
            int(ok["selection_correct"].sum()), int(ok["selection_attempted"].sum())
        ),
    }


def _cache_share(ok: pd.DataFrame) -> dict[str, object]:
    prompt, cached = (_count(ok, column) for column in ("prompt_tokens", "cached_tokens"))
    return {
        "prompt_tokens": prompt,
        "cached_tokens": cached,
        "cached_share": _ratio(cached, prompt),
    }


def _hidden(ok: pd.DataFrame, column: str) -> bool:
    """Every measured item has the flag ``column`` false (a table from before it: never)."""
    return column in ok and len(ok) > 0 and not ok[column].astype(bool).any()


def _one(rows: pd.DataFrame, column: str) -> str | None:
    """The column's one value over the rows (None: absent, or more than one)."""
    if column not in rows:
        return None
    values = rows[column].dropna().unique()
    return str(values[0]) if len(values) == 1 else None


def _summed_json(rows: pd.DataFrame, column: str) -> str:
    """A JSON column of per-gate counts, summed over the rows (as JSON text)."""
    total: dict[str, int] = {}
    if column in rows:
        for text in rows[column].dropna():
            try:
                counts = json.loads(text) if isinstance(text, str) else {}
            except ValueError:
                continue
            for gate, count in counts.items():
                total[gate] = total.get(gate, 0) + int(count)
    return json.dumps(total, sort_keys=True)


def _count(rows: pd.DataFrame, column: str) -> int:
    if column not in rows:  # results saved before the column existed
        return 0
    return int(pd.to_numeric(rows[column], errors="coerce").fillna(0).sum())


def measures(results: pd.DataFrame) -> pd.DataFrame:
    """One row per variant (index ``variant``), in table order: current, policy, ablations."""
    order = variant_order(set(results["variant"])) if len(results) else []
    excluded = incomplete_instances(results)
    unlabelled = unlabelled_instances(results)
    rows = [_sampled_row(results[results["variant"] == v], excluded, unlabelled) for v in order]
    return pd.DataFrame(rows, index=pd.Index(order, name="variant"), columns=list(COLUMNS))


def row_of(table: pd.DataFrame, variant: str) -> pd.Series:
    """The row of ``variant`` in a table indexed by variant (:func:`measures`, the decision
    table), which holds one row per variant."""
    found = table.loc[variant]
    if not isinstance(found, pd.Series):  # a label the index repeats selects a frame
        raise ValueError(f"variant {variant!r} has more than one row")
    return found


def _sampled_row(
    rows: pd.DataFrame, excluded: set[tuple[object, ...]], unlabelled: set[object]
) -> dict[str, object]:
    shared = _variant_row(rows, excluded, unlabelled)
    if shared["n"]:
        return shared
    # The shared sample is empty for this variant: a blank row would hide what it did measure.
    own = _variant_row(rows, set(), unlabelled)
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
