"""One variant's rows and what its columns of the table are computed from, each derived once.

Every variant is measured on the same instances (spec §9: the identical sample), so a
:class:`VariantRows` is made with the runs left out of every variant (``sample.py``) and the
instances without a gold label; the declarations (``measure_columns.py``, ``detail_columns.py``)
read it.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from functools import cached_property
from typing import Any

import pandas as pd

from .sample import label_sources, measured, resolved_as_measured, run_keys, trials_of


class VariantRows:
    """``rows``: every row of the variant; ``ok``: those it measures, on the shared sample (an
    unlabelled instance's selections zeroed, an item the endpoint ended not resolved)."""

    def __init__(
        self, rows: pd.DataFrame, excluded: set[tuple[object, ...]], unlabelled: set[object]
    ) -> None:
        self.rows = rows
        # Every variant is measured on the same instances (spec §9: the identical sample), so an
        # instance with an unmeasured item anywhere is left out of all of them.
        ok = rows[measured(rows) & ~run_keys(rows).isin(excluded)]
        self.labelled = ~ok["instance_id"].isin(unlabelled)
        self.sources = label_sources(ok)
        # An unlabelled instance's selections count in no variant: zeroed here, so the trial
        # spreads below leave it out too. An item the endpoint ended resolved nothing.
        self.ok = ok.assign(
            selection_correct=ok["selection_correct"].where(self.labelled, 0),
            selection_attempted=ok["selection_attempted"].where(self.labelled, 0),
            resolved=resolved_as_measured(ok),
        )

    @cached_property
    def n(self) -> int:
        return len(self.ok)

    @cached_property
    def resolved(self) -> int:
        return int(self.ok["resolved"].sum())

    @cached_property
    def calls(self) -> int:
        return int(self.ok["calls"].sum())

    @cached_property
    def necessary(self) -> int:
        return int(self.ok["necessary_calls"].sum())

    @cached_property
    def correct(self) -> int:
        return int(self.ok["selection_correct"].sum())

    @cached_property
    def attempted(self) -> int:
        return int(self.ok["selection_attempted"].sum())

    @cached_property
    def under(self) -> pd.Series:
        return self.ok["underspecified"].astype(bool)

    @cached_property
    def abstained(self) -> pd.Series:
        return self.ok["abstained"].astype(bool)

    @cached_property
    def tokens_total(self) -> int:
        return int(self.ok["tokens"].sum())

    # -- trials: pass^k and each measure's spread -----------------------------------------------

    @cached_property
    def trial(self) -> pd.Series:
        return trials_of(self.ok)

    @cached_property
    def k(self) -> int:
        return int(self.trial.max()) if len(self.ok) else 1

    @cached_property
    def by_instance(self) -> Any:  # a DataFrameGroupBy
        return self.ok.assign(_trial=self.trial).groupby("instance_id")

    @cached_property
    def passed_all(self) -> int:
        """Instances every one of whose K trials resolved."""
        resolved = self.by_instance["resolved"]
        return int(resolved.apply(lambda r: bool(r.astype(bool).all())).sum())

    @cached_property
    def per_trial(self) -> list[dict[str, float]]:
        """The five measures of each trial, each trial taken as a run of the whole sample."""
        return [plain_measures(self.ok[self.trial == t]) for t in sorted(set(self.trial))]

    def spread(self, name: str) -> float:
        """The standard deviation of measure ``name`` over the trials; NaN with one trial."""
        if self.k <= 1:
            return math.nan
        values = pd.Series([row[name] for row in self.per_trial], dtype=float).dropna()
        return float(values.std(ddof=1)) if len(values) > 1 else math.nan


def ratio(num: int, den: int) -> float:
    return num / den if den else math.nan


def mean_cost(costs: pd.Series) -> float:
    # Summed as exact decimals so three items at $0.1 average to exactly 0.1, which the decision
    # rule then reads back through repr(); one unpriced item makes the whole mean unknown.
    if costs.empty or costs.isna().any():
        return math.nan
    return float(sum((Fraction(repr(float(c))) for c in costs), Fraction(0)) / len(costs))


def plain_measures(ok: pd.DataFrame) -> dict[str, float]:
    """The five measures of measured rows, for one trial's spread."""
    n = len(ok)
    return {
        "resolve": ratio(int(ok["resolved"].sum()), n),
        "cost": mean_cost(ok["cost_usd"]),
        "tokens": ratio(int(ok["tokens"].sum()), n),
        "call_precision": ratio(int(ok["necessary_calls"].sum()), int(ok["calls"].sum())),
        "selection_accuracy": ratio(
            int(ok["selection_correct"].sum()), int(ok["selection_attempted"].sum())
        ),
    }


def hidden(ok: pd.DataFrame, column: str) -> bool:
    """Every measured item has the flag ``column`` false (a table from before it: never)."""
    return column in ok and len(ok) > 0 and not ok[column].astype(bool).any()


def one_value(rows: pd.DataFrame, column: str) -> str | None:
    """The column's one value over the rows (None: absent, or more than one)."""
    if column not in rows:
        return None
    values = rows[column].dropna().unique()
    return str(values[0]) if len(values) == 1 else None


def summed_json(rows: pd.DataFrame, column: str) -> str:
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


def column_sum(rows: pd.DataFrame, column: str) -> int:
    if column not in rows:  # results saved before the column existed
        return 0
    return int(pd.to_numeric(rows[column], errors="coerce").fillna(0).sum())
