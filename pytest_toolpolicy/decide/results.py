"""The results frame: built from rows, made safe to store.

Every measure of the decision table is a function of ``trajectories.jsonl`` (the necessary-call
counts of the counterfactual reruns are kept in each trajectory's meta), so a user can rebuild
the table, or a different one, without rerunning anything (``run/rebuild.py``):

    results = results_from_trajectories("reports/<run>/trajectories.jsonl")
    decision_table(results)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from .. import jsonsafe
from .schema import COLUMNS, OPTIONAL_COLUMNS


def results_frame(rows: Iterable[dict[str, Any]]) -> pd.DataFrame:
    """The rows as a frame with every schema column, even when no row has it: a session whose
    every item failed has only error rows, which carry little beyond their identity. Text is
    escaped first: a lone surrogate (a model's reply in an error, a traceback) is valid in a
    Python str but not in pyarrow's, which pandas' string columns and parquet are."""
    return conform(pd.DataFrame([_escaped(row) for row in rows]))


def _escaped(row: dict[str, Any]) -> dict[str, Any]:
    return {k: jsonsafe.escape(v) if isinstance(v, str) else v for k, v in row.items()}


def conform(results: pd.DataFrame) -> pd.DataFrame:
    """``results`` with the schema's columns first (missing ones empty), then anything else."""
    extra = [c for c in results.columns if c not in COLUMNS]
    extra.sort(key=lambda c: (c not in OPTIONAL_COLUMNS, list(results.columns).index(c)))
    if list(results.columns) == [*COLUMNS, *extra]:
        return results
    return results.reindex(columns=[*COLUMNS, *extra])


def escape_strings(results: pd.DataFrame) -> pd.DataFrame:
    """A copy whose text cells are valid UTF-8 (see :func:`results_frame`); only object
    columns can hold anything else."""
    out = results.copy()
    for column in out.columns:
        if out[column].dtype == object:
            out[column] = out[column].map(lambda v: jsonsafe.escape(v) if isinstance(v, str) else v)
    return out
