"""The decision table's first columns: what a variant is, which items it measured, and spec §9's
five measures with the counts the rules compare exactly (``exact.py``).

Each column is computed from the variant's measured rows (``VariantRows``); the table's order is
the order of these declarations, then ``detail_columns.py``'s.
"""

from __future__ import annotations

import math

from .cells import count, frac, model_errors, num, precision_cell, selection_cell
from .sample import SHARED, measured
from .table_column import Shown, TableColumn
from .variant_rows import VariantRows, hidden, mean_cost, one_value, ratio

Measure = TableColumn[VariantRows]

# Items the endpoint ended, measured as not resolved: a column only when there are any
ENDPOINT_ERRORS = "endpoint-err"


def _gate(v: VariantRows) -> object:
    gate = v.rows["gate"].dropna()
    return gate.iloc[0] if len(gate) else None


def _model(v: VariantRows) -> object:
    models = v.rows["model"].dropna().unique()
    return models[0] if len(models) == 1 else None


def _not_shown(v: VariantRows, flag: str) -> int:
    """The measured items whose flag ``flag`` is false (0 for results from before it)."""
    return int((~v.ok[flag].astype(bool)).sum()) if flag in v.ok else 0


MEASURE_COLUMNS: tuple[Measure, ...] = (
    Measure("arm", "the variant's arm: current or policy", lambda v: v.rows["arm"].iloc[0]),
    Measure("gate", "the gate a policy-no:<gate> variant turns off, else empty", _gate),
    # The decision names why a cost is unknown, which depends on how the model is priced.
    Measure("model", "the model spec, when every row names the same one", _model),
    Measure(
        "sample",
        "which items the row measures: shared (the sample every variant shares), own (its own"
        " measured items: the shared sample left it none; no verdict compares it), none",
        lambda v: SHARED,
    ),
    Measure("n", "items measured", lambda v: v.n),
    Measure(
        "n_errors",
        "items not measured (a harness fault, grading that could not run)",
        lambda v: int((~measured(v.rows)).sum()),
    ),
    Measure(
        "model_errors",
        "measured items the endpoint ended (measured as not resolved)",
        lambda v: int((v.ok["status"] == "model_error").sum()),
        Shown(
            ENDPOINT_ERRORS,
            lambda r: f"{count(r['model_errors'])}/{count(r['n'])}",
            place=9,
            when=model_errors,
        ),
    ),
    Measure(
        "cost_unknown",
        "measured items whose cost is unknown",
        lambda v: int(v.ok["cost_usd"].isna().sum()),
    ),
    Measure("resolved", "measured items resolved", lambda v: v.resolved),
    Measure(
        "resolve",
        "resolve rate: resolved / n",
        lambda v: ratio(v.resolved, v.n),
        Shown("resolve", lambda r: frac(r["resolve"], r["resolved"], r["n"]), place=1),
    ),
    Measure(
        "cost",
        "$ per measured item (NaN when any item's cost is unknown)",
        lambda v: mean_cost(v.ok["cost_usd"]),
        Shown("$/inst", lambda r: num(r["cost"], ".4f"), place=2),
    ),
    Measure(
        "tokens",
        "tokens per measured item",
        lambda v: ratio(v.tokens_total, v.n),
        Shown("tok/inst", lambda r: num(r["tokens"], ".0f"), place=3),
    ),
    Measure("tokens_total", "tokens of the measured items", lambda v: v.tokens_total),
    Measure("calls", "executed tool calls of the measured items", lambda v: v.calls),
    Measure(
        "necessary",
        "of which necessary (their removal flips resolved)",
        lambda v: v.necessary,
    ),
    # items whose agent hid its tool calls (an external command agent)
    Measure(
        "calls_hidden",
        "measured items whose agent hid its tool calls",
        lambda v: _not_shown(v, "calls_observable"),
    ),
    Measure(
        "precision_hidden",
        "measured items whose calls cannot be rerun one at a time (an external agent)",
        lambda v: _not_shown(v, "call_precision_observable"),
    ),
    Measure(
        "agent", "who played the arm, when one agent did", lambda v: one_value(v.rows, "agent")
    ),
    # An external agent's: not known, so not a number (never 0 or 1; see unobservable)
    Measure(
        "call_precision",
        "necessary / calls; NaN where no item's calls can be rerun",
        lambda v: (
            math.nan if hidden(v.ok, "call_precision_observable") else ratio(v.necessary, v.calls)
        ),
        Shown("call-prec", precision_cell, place=4),
    ),
    Measure("sel_correct", "decision points chosen as the gold label says", lambda v: v.correct),
    Measure(
        "sel_attempted",
        "decision points scored (labelled instances only)",
        lambda v: v.attempted,
    ),
    Measure(
        "selection_accuracy",
        "sel_correct / sel_attempted; NaN where no item shows its calls",
        lambda v: math.nan if hidden(v.ok, "calls_observable") else ratio(v.correct, v.attempted),
        Shown("sel-acc", selection_cell, place=5),
    ),
)
