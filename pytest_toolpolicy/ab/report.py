"""The end of an A/B session: the results frame, the decision table, the report files, and
whether the CI gate holds."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from .. import jsonsafe
from ..paths import write_atomic
from .render import failure_lines
from .results import escape_strings
from .table import decision_table, render_text, write_report

NOTHING_MEASURED = "no item was measured"


@dataclass(frozen=True)
class Finished:
    lines: list[str]  # the terminal summary
    gate_failed: str | None  # why the gate fails (only with --toolpolicy-gate)
    write_error: str | None  # the report could not be written (the summary still shows it)


def finish(
    results: pd.DataFrame,
    meta: dict[str, Any],
    trajectories: list[dict[str, Any]],
    directory: Path,
    *,
    gate: bool = False,
) -> Finished:
    """The session's summary and report files from its data: the results rows, the header's
    facts, the rows' trajectories; with ``gate``, whether the CI gate holds."""
    # Escaped once here, so the terminal, every file and the gate see the same valid text.
    results = escape_strings(results)
    table = decision_table(results, meta)
    lines = render_text(table, meta).splitlines()
    lines += failure_lines(results)
    write_error = None
    try:  # the table is already in hand: a full disk costs the files, never the summary
        paths = write_report(results, meta, directory)
        paths["trajectories"] = write_trajectories(trajectories, directory)
    except OSError as exc:
        write_error = f"could not write the report to {directory}: {exc}"
    else:
        names = ", ".join(sorted(p.name for p in paths.values()))
        lines.append(f"reports: {directory}/ ({names})")
    if "resumed" in results and results["resumed"].fillna(False).astype(bool).any():
        lines.append(f"resumed: {int(results['resumed'].fillna(False).astype(bool).sum())} items")
    all_failed = not (results["status"] == "ok").any()
    failed = gate_failure(table, all_failed) if gate else None
    return Finished(lines, failed, write_error)


def gate_failure(table: pd.DataFrame, all_failed: bool = False) -> str | None:
    """None when the candidate wins; otherwise which criteria failed (or why none was decided)."""
    if "policy" not in table.index or "current" not in table.index:
        return "no decision: both arms must run (--toolpolicy=ab)"
    if all_failed:
        return f"{NOTHING_MEASURED}: every item was a harness fault or a model error"
    if not table.loc[["policy", "current"], "n"].all():
        # Items ran, but no instance has a measured item in both arms to compare.
        return f"{NOTHING_MEASURED} in both arms of any instance (see the items not measured)"
    row = table.loc["policy"]
    verdict = str(row.get("verdict") or "")
    if verdict.startswith("ADOPT"):
        return None
    return verdict or "no verdict"


def write_trajectories(trajectories: list[dict[str, Any]], directory: Path) -> Path:
    lines = "".join(jsonsafe.dumps(t) + "\n" for t in trajectories)
    path = Path(directory) / "trajectories.jsonl"
    return write_atomic(path, lambda p: p.write_text(lines, encoding="utf-8"))
