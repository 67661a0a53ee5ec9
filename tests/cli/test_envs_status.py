"""``toolpolicy envs status``: environments per repository and the recorded validation coverage,
a recorded row of the wrong shape or cut short skipped and said once."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from pytest_toolpolicy.cli import main
from pytest_toolpolicy.envs.cache import envs_root
from pytest_toolpolicy.grading.coverage import record_row
from pytest_toolpolicy.grading.validate import ValidationRow

from ..malformed import one_line


def test_status_prints_environments_and_coverage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = envs_root()
    root.mkdir(parents=True)
    (root / "o__a-1.0-abc.json").write_text('{"repo": "o/a"}')
    (root / "o__a-2.0-def.failed.json").write_text('{"spec": "o/a 2.0", "error": "no wheel"}')
    record = tmp_path / "rows.jsonl"
    for iid, category, cause in [("a-1", "validated", ""), ("a-2", "infra_error", "network")]:
        row = ValidationRow(
            iid, "-", "-", category == "validated", "v", 1.0, "o/a", category, cause
        )  # type: ignore[arg-type]
        record_row(record, row)
    wrong = {**dataclasses.asdict(row), "instance_id": "a-3", "seconds": "slow", "repo": 5}
    with record.open("a") as handle:  # a row of the wrong shape, then a run killed mid-line
        handle.write(json.dumps(wrong) + "\ntorn")
    assert main(["envs", "status", "--record", str(record)]) == 0
    captured = capsys.readouterr()
    out = captured.out.splitlines()
    assert out[1] == "  o/a: 1 built, 1 failed"
    assert out[3] == f"validation coverage (2 instance(s) recorded in {record}):"
    assert out[6] == "| o/a | 2 | 1 | 50% | 1 | network ×1 | 0 | - |" and len(out) == 7
    assert one_line(captured.err) == (
        f"toolpolicy envs status: {record}:3: not a validation row (seconds is str, not float)"
        " (2 malformed lines skipped: 3, 4)"
    )
