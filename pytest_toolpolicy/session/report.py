"""The end of an A/B session: the results frame, the decision table, the report files, and
whether the CI gate holds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from .. import jsonsafe
from ..decide.failures import failure_lines
from ..decide.render import render_text
from ..decide.report_files import write_report
from ..decide.results import escape_strings
from ..decide.table import decision_table
from ..paths import write_atomic

if TYPE_CHECKING:
    from ..bench.instance import Instance

NOTHING_MEASURED = "no item was measured"


@dataclass(frozen=True)
class Finished:
    lines: list[str]  # the terminal summary
    gate_failed: str | None  # why the gate fails (only with --toolpolicy-gate)
    write_error: str | None  # the report could not be written (the summary still shows it)
    viewer: str | None = None  # the last line: where the viewer's index is, or why there is none


def finish(
    results: pd.DataFrame,
    meta: dict[str, Any],
    trajectories: list[dict[str, Any]],
    directory: Path,
    *,
    gate: bool = False,
    instances: Sequence[Instance] = (),
    view: bool = True,
) -> Finished:
    """The session's summary and report files from its data: the results rows, the header's
    facts, the rows' trajectories, the instances they ran (their issues and test lists, for the
    viewer); with ``gate``, whether the CI gate holds; with ``view``, the viewer's site."""
    # Escaped once here, so the terminal, every file and the gate see the same valid text.
    results = escape_strings(results)
    table = decision_table(results, meta)
    lines = render_text(table, meta).splitlines()
    lines += failure_lines(results)
    write_error = None
    try:  # the table is already in hand: a full disk costs the files, never the summary
        paths = write_report(results, meta, directory, table)
        paths["trajectories"] = write_trajectories(trajectories, directory)
        paths["instances"] = write_instances(instances, directory)
    except OSError as exc:
        write_error = f"could not write the report to {directory}: {exc}"
    else:
        names = ", ".join(sorted(p.name for p in paths.values()))
        lines.append(f"reports: {directory}/ ({names})")
    if "resumed" in results and results["resumed"].fillna(False).astype(bool).any():
        lines.append(f"resumed: {int(results['resumed'].fillna(False).astype(bool).sum())} items")
    all_failed = not (results["status"] == "ok").any()
    failed = gate_failure(table, all_failed) if gate else None
    viewer = build_viewer(directory, table) if view and write_error is None else None
    return Finished(lines, failed, write_error, viewer)


def build_viewer(directory: Path, table: pd.DataFrame | None = None) -> str:
    """The viewer's site, built from the files just written (so it shows what a later
    ``toolpolicy view`` would). Its failure is reported, never the session's: the results are
    already on disk."""
    from ..view import ReportError, SiteError, build_site

    try:
        site = build_site(directory, table=table)
    except (ReportError, SiteError, OSError) as exc:
        return f"viewer: not built: {exc} (retry with: toolpolicy view {directory})"
    return f"viewer: {site.index} ({site.pages} pages, {site.bytes / 1e6:.1f} MB, {site.seconds:.1f} s)"


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


def write_instances(instances: Sequence[Instance], directory: Path) -> Path:
    """What the viewer shows of each instance: its issue and which tests decide it."""
    lines = "".join(
        jsonsafe.dumps(
            {
                "instance_id": i.instance_id,
                "repo": i.repo,
                "problem_statement": i.problem_statement,
                "FAIL_TO_PASS": list(i.FAIL_TO_PASS),
                "PASS_TO_PASS": list(i.PASS_TO_PASS),
                "underspecified": i.underspecified,
            }
        )
        + "\n"
        for i in instances
    )
    path = Path(directory) / "instances.jsonl"
    return write_atomic(path, lambda p: p.write_text(lines, encoding="utf-8"))


def write_trajectories(trajectories: list[dict[str, Any]], directory: Path) -> Path:
    lines = "".join(jsonsafe.dumps(t) + "\n" for t in trajectories)
    path = Path(directory) / "trajectories.jsonl"
    return write_atomic(path, lambda p: p.write_text(lines, encoding="utf-8"))
