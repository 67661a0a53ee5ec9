"""The items not measured, and those the endpoint ended, one aligned line each, under the
terminal summary."""

from __future__ import annotations

import pandas as pd

from .compact import aligned
from .variants import item_of


def failure_lines(results: pd.DataFrame, limit: int = 20) -> list[str]:
    """What was not measured and why, and what the endpoint ended (measured as not resolved),
    one aligned line per item (the first ``limit``)."""
    if not len(results) or "status" not in results:
        return []
    failed = results[results["status"] != "ok"]
    if not len(failed):
        return []
    ended = int((failed["status"] == "model_error").sum())
    rows = [["item", "status", "error"]]
    for _, r in failed.head(limit).iterrows():
        error = str(r.get("error") or "").strip().splitlines() or [""]
        reason = error[0] if len(error[0]) <= 160 else error[0][:159] + "\u2026"
        rows.append([item_of(r), str(r["status"]), reason])
    head = f"not measured: {len(failed) - ended} of {len(results)} items"
    if ended:
        head += f"; ended by the endpoint (measured as not resolved): {ended}"
    lines = [head, *aligned(rows)]
    if len(failed) > limit:
        lines.append(f"... and {len(failed) - limit} more (results.parquet has them all)")
    return lines
