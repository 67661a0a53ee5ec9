"""The decision table's columns beside the five measures: the gold labels selection was scored
on, abstention both ways, the trials (pass^k and each measure's spread), how often each gate
acted, the provider's prefix cache, the counterfactual reruns' spend (never in the measures),
and how the replies parsed.

Each column is computed from the variant's measured rows (``VariantRows``), in this order after
``measure_columns.py``'s.
"""

from __future__ import annotations

import math

from .cells import frac, several_trials
from .exact import MEASURES
from .schema import GOLD_DERIVED as DERIVED
from .schema import GOLD_HAND as HAND
from .table_column import Shown, TableColumn
from .variant_rows import VariantRows, column_sum, ratio, summed_json

Detail = TableColumn[VariantRows]

PASS_K = "pass^k"  # a column of its own only when instances ran several trials


def _labelled(v: VariantRows, source: str) -> int:
    """Instances scored on a gold label from ``source``."""
    return int(v.ok.loc[v.labelled & (v.sources == source), "instance_id"].nunique())


def _spread(name: str) -> Detail:
    return Detail(
        f"sd_{name}",
        f"the spread of {name} over the trials (standard deviation); NaN with one trial",
        lambda v: v.spread(name),
    )


def _cf(name: str, doc: str, kind: type[int] | type[float] = int) -> Detail:
    return Detail(name, doc, lambda v: kind(v.ok[name].sum()))


LABEL_COLUMNS: tuple[Detail, ...] = (
    Detail(
        "labelled_hand", "instances scored on a hand-written label", lambda v: _labelled(v, HAND)
    ),
    Detail(
        "labelled_derived",
        "instances scored on a label derived from the gold patch",
        lambda v: _labelled(v, DERIVED),
    ),
    Detail(
        "unlabelled",
        "instances without a label (left out of selection accuracy in every variant)",
        lambda v: int(v.ok.loc[~v.labelled, "instance_id"].nunique()),
    ),
)
ABSTENTION_COLUMNS: tuple[Detail, ...] = (
    Detail(
        "underspecified",
        "measured items of under-specified instances",
        lambda v: int(v.under.sum()),
    ),
    Detail(
        "abstained_correct",
        "of which the arm abstained on",
        lambda v: int((v.under & v.abstained).sum()),
    ),
    Detail(
        "abstention",
        "correct abstention: abstained_correct / underspecified",
        lambda v: ratio(int((v.under & v.abstained).sum()), int(v.under.sum())),
        Shown(
            "abstain",
            lambda r: frac(r["abstention"], r["abstained_correct"], r["underspecified"]),
            place=6,
        ),
    ),
    Detail("resolvable", "measured items of resolvable instances", lambda v: int((~v.under).sum())),
    # Abstaining where a fix was expected: the same definition, on the resolvable instances.
    Detail(
        "abstained_false",
        "of which the arm abstained on",
        lambda v: int((~v.under & v.abstained).sum()),
    ),
    Detail(
        "false_abstention",
        "false abstention: abstained_false / resolvable",
        lambda v: ratio(int((~v.under & v.abstained).sum()), int((~v.under).sum())),
        Shown(
            "false-abst",
            lambda r: frac(r["false_abstention"], r["abstained_false"], r["resolvable"]),
            place=7,
        ),
    ),
)
TRIAL_COLUMNS: tuple[Detail, ...] = (
    Detail("instances", "instances measured", lambda v: int(v.by_instance.ngroups)),
    Detail("trials", "trials per instance (K)", lambda v: v.k),
    Detail("passed_all", "instances resolved in every trial", lambda v: v.passed_all),
    Detail(
        "pass_k",
        "pass^k: passed_all / instances; NaN with one trial",
        lambda v: ratio(v.passed_all, int(v.by_instance.ngroups)) if v.k > 1 else math.nan,
        Shown(
            PASS_K,
            lambda r: frac(r["pass_k"], r["passed_all"], r["instances"]),
            place=8,
            when=several_trials,
        ),
    ),
    *(_spread(name) for name in MEASURES),
)
DETAIL_COLUMNS: tuple[Detail, ...] = (
    *LABEL_COLUMNS,
    *ABSTENTION_COLUMNS,
    *TRIAL_COLUMNS,
    Detail(
        "acts",
        "JSON {gate: times it acted} over the measured items",
        lambda v: summed_json(v.ok, "gate_acts"),
    ),
    Detail(
        "blocked",
        "JSON {gate: times it could not act} over the measured items",
        lambda v: summed_json(v.ok, "gate_blocked"),
    ),
    Detail(
        "rejections",
        "JSON {rule: times a call broke it} over the measured items",
        lambda v: summed_json(v.ok, "rejections"),
    ),
    Detail(
        "reselections",
        "selections made again after a rejection, over the measured items",
        lambda v: column_sum(v.ok, "reselections"),
    ),
    # What a provider's prefix cache served (the cost measure prices it at the cached rate).
    Detail("prompt_tokens", "prompt tokens", lambda v: column_sum(v.ok, "prompt_tokens")),
    Detail(
        "cached_tokens",
        "of which the prefix cache served",
        lambda v: column_sum(v.ok, "cached_tokens"),
    ),
    Detail(
        "cached_share",
        "cached_tokens / prompt_tokens",
        lambda v: ratio(column_sum(v.ok, "cached_tokens"), column_sum(v.ok, "prompt_tokens")),
    ),
    _cf("cf_cost_usd", "the counterfactual reruns' $ (never in the measures)", float),
    _cf("cf_tokens", "the reruns' tokens"),
    _cf("cf_model_calls", "requests the reruns sent to the model"),
    _cf("cf_tool_executions", "tool calls the reruns ran that the item had not made before"),
    # Over every item, failed ones too: how well the model keeps to the arm's call format
    # is a fact about the run, not a measure of the sample.
    Detail("replies", "model replies over every item", lambda v: column_sum(v.rows, "replies")),
    Detail(
        "replies_parsed",
        "of which parsed as the arm's call format",
        lambda v: column_sum(v.rows, "replies_parsed"),
    ),
)
