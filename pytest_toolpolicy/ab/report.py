"""The end of an A/B session: the results frame, the decision table, the report files, and
whether the CI gate holds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..paths import write_atomic
from .table import decision_table, render_text, write_report

if TYPE_CHECKING:
    from .session import ABSession


def finish(ab: ABSession) -> tuple[list[str], str | None]:
    """(summary lines, why the gate fails or None)."""
    results = ab.results()
    meta = ab.meta()
    table = decision_table(results, meta)
    paths = write_report(results, meta, ab.settings.report)
    ids = [f"{r['instance_id']}-{r['variant']}" for _, r in results.iterrows()]
    paths["trajectories"] = write_trajectories(ab.trajectories(ids), ab.settings.report)
    lines = render_text(table, meta).splitlines()
    names = ", ".join(sorted(p.name for p in paths.values()))
    lines.append(f"reports: {ab.settings.report}/ ({names})")
    if "resumed" in results and results["resumed"].fillna(False).astype(bool).any():
        lines.append(f"resumed: {int(results['resumed'].fillna(False).astype(bool).sum())} items")
    return lines, gate_failure(table) if ab.settings.gate else None


def gate_failure(table: pd.DataFrame) -> str | None:
    """None when the candidate wins; otherwise which criteria failed (or why none was decided)."""
    if "policy" not in table.index or "current" not in table.index:
        return "no decision: both arms must run (--toolpolicy=ab)"
    row = table.loc["policy"]
    verdict = str(row.get("verdict") or "")
    if verdict.startswith("ADOPT"):
        return None
    return verdict or "no verdict"


def write_trajectories(trajectories: list[dict[str, Any]], directory: Path) -> Path:
    lines = "".join(json.dumps(t, ensure_ascii=False, default=str) + "\n" for t in trajectories)
    return write_atomic(Path(directory) / "trajectories.jsonl", lambda p: p.write_text(lines))
