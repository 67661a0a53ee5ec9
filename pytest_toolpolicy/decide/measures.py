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
the harness cannot observe at all on a row's items says why (:func:`.exact.unobservable`), which
the rules tell apart from a measure that is merely undefined.

Each column is declared once, with its meaning, how it is computed from the variant's rows and
how it is shown (``measure_columns.py``, ``detail_columns.py``); this module applies them.
"""

from __future__ import annotations

import pandas as pd

from .detail_columns import DETAIL_COLUMNS
from .measure_columns import MEASURE_COLUMNS
from .sample import NONE, OWN, incomplete_instances, unlabelled_instances
from .table_column import TableColumn
from .variant_rows import VariantRows
from .variants import variant_order

# The columns computed from a variant's measured rows, in the table's order.
PER_VARIANT: tuple[TableColumn[VariantRows], ...] = (*MEASURE_COLUMNS, *DETAIL_COLUMNS)
COLUMNS = tuple(column.name for column in PER_VARIANT)


def _variant_row(
    rows: pd.DataFrame, excluded: set[tuple[object, ...]], unlabelled: set[object]
) -> dict[str, object]:
    figures = VariantRows(rows, excluded, unlabelled)
    return {column.name: column.compute(figures) for column in PER_VARIANT}


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
