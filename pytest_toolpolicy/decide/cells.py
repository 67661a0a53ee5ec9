"""The cells of the compact table (terminal and Markdown) and of the summary lines: a number, a
ratio with its counts, a measure the harness could not observe, a count."""

from __future__ import annotations

import math

import pandas as pd

from .exact import unobservable


def num(x: float, spec: str) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def frac(x: float, part: int, whole: int) -> str:
    return f"{num(x, '.3f')} ({part}/{whole})"


def trials(table: pd.DataFrame) -> int:
    values = pd.to_numeric(table.get("trials", pd.Series(dtype=float)), errors="coerce")
    return int(values.max()) if len(values.dropna()) else 1


def model_errors(table: pd.DataFrame) -> bool:
    """Any variant has items the endpoint ended (a table from before the count: none)."""
    return "model_errors" in table and any(count(v) for v in table["model_errors"])


def selection_cell(r: pd.Series) -> str:
    if why := unobservable(r, "selection_accuracy"):
        if why.startswith("no gold labels"):
            return "n/a (no labels)"  # not 0/0 attempts: there was nothing to score them on
        return "not observable"  # an external agent's hidden calls: the header says why
    return frac(r["selection_accuracy"], r["sel_correct"], r["sel_attempted"])


def precision_cell(r: pd.Series) -> str:
    if unobservable(r, "call_precision"):
        return "not observable"  # never 0 or 1: which calls were necessary is not known
    return frac(r["call_precision"], r["necessary"], r["calls"])


def count(value: object) -> int:
    """A count cell as an int (0 where a table from before the column has none)."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0
    return 0 if math.isnan(number) else int(number)


def several_trials(table: pd.DataFrame) -> bool:
    """Instances ran several trials: pass^k has a column of its own."""
    return trials(table) > 1
