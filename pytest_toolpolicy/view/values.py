"""Cell values read back from a results frame, where a missing value is None, NaN or pd.NA and a
boolean may be numpy's: each read as plain Python, or None."""

from __future__ import annotations

import math
from typing import Any


def truth(value: Any) -> bool | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    try:
        return bool(value)
    except TypeError:  # pd.NA
        return None


def number(value: Any) -> float | None:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(out) else out


def plain(value: Any) -> str:
    return "" if number(value) is None and not isinstance(value, str) else str(value)


def yes_no(value: Any) -> str:
    flag = truth(value)
    return "" if flag is None else ("yes" if flag else "no")


def integer_text(value: Any) -> str:
    out = number(value)
    return "" if out is None else f"{int(out):,}"


def number_text(value: Any, spec: str) -> str:
    out = number(value)
    return "" if out is None else format(out, spec)
