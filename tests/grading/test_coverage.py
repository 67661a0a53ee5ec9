"""Coverage per repository from validation rows, and the log those rows are kept in."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from pytest_toolpolicy.grading.coverage import coverage, format_coverage, read_rows, record_row
from pytest_toolpolicy.grading.validate import ValidationRow


def row(iid: str, repo: str, category: str, cause: str = "") -> ValidationRow:
    return ValidationRow(iid, "-", "-", category == "validated", "v", 1.0, repo, category, cause)  # type: ignore[arg-type]


def test_counts_and_causes_per_repository() -> None:
    rows = [
        row("a-1", "o/a", "validated"),
        row("a-2", "o/a", "infra_error", "network"),
        row("a-3", "o/a", "infra_error", "network"),
        row("a-4", "o/a", "infra_error", "disk bound"),
        row("b-1", "o/b", "validated"),
        row("b-2", "o/b", "failed", "gold: tests failed"),
    ]
    table = coverage(rows)
    assert table.to_dict("records") == [
        {"repo": "o/a", "rows": 4, "validated": 1, "share": "25%", "infra_error": 3,
         "infra causes": "network ×2, disk bound ×1", "failed": 0, "failure causes": "-"},
        {"repo": "o/b", "rows": 2, "validated": 1, "share": "50%", "infra_error": 0,
         "infra causes": "-", "failed": 1, "failure causes": "gold: tests failed ×1"},
        {"repo": "all", "rows": 6, "validated": 2, "share": "33%", "infra_error": 3,
         "infra causes": "network ×2, disk bound ×1", "failed": 1,
         "failure causes": "gold: tests failed ×1"},
    ]  # fmt: skip
    text = format_coverage(table).splitlines()
    assert text[0].startswith("| repo | rows | validated |") and len(text) == 5
    assert format_coverage(coverage([])) == "no validation rows"


def test_the_log_keeps_the_latest_row_and_survives_a_torn_line(tmp_path: Path) -> None:
    log = tmp_path / "v" / "rows.jsonl"
    record_row(log, row("a-1", "o/a", "infra_error", "network"))
    record_row(log, row("a-2", "o/a", "validated"))
    record_row(log, row("a-1", "o/a", "validated"))  # a later run of the same instance
    with open(log, "a", encoding="utf-8") as handle:
        handle.write('{"instance_id": "a-3", "gold"')  # a run killed mid-write
    rows, problems = read_rows(log)
    assert sorted((r.instance_id, r.category) for r in rows) == [
        ("a-1", "validated"),
        ("a-2", "validated"),
    ]
    assert len(problems) == 1 and problems[0].startswith(f"{log}:4: not a validation row")
    assert read_rows(tmp_path / "none.jsonl") == ([], [])
    # A row written before the repository and cause were recorded still reads.
    kept = ("instance_id", "gold", "empty", "ok", "verdict", "seconds")
    old = [
        {k: v for k, v in dataclasses.asdict(row(iid, "", "failed")).items() if k in kept}
        for iid in ("a-7", "a-8", "a-9")
    ]
    old[0].update(ok=True, gold="resolved", empty="unresolved")
    old[1].update(gold="infra_error")
    log.write_text("".join(json.dumps(o) + "\n" for o in old))
    rows, _ = read_rows(log)
    assert [(r.instance_id, r.repo, r.category) for r in rows] == [
        ("a-7", "", "validated"),
        ("a-8", "", "infra_error"),
        ("a-9", "", "failed"),
    ]
