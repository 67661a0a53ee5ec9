"""The end of a session from its data alone: results rows, header facts and trajectories in,
summary lines, report files and the gate's answer out — no pytest session needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_toolpolicy.decide.meta import meta_from
from pytest_toolpolicy.session.report import finish

from ..decide.results_factory import frame, item


def _results(policy_resolved: bool):
    return frame(
        [
            item(instance_id="a__b-1", variant="current", resolved=False),
            item(instance_id="a__b-1", variant="policy", resolved=policy_resolved),
        ]
    )


def test_finish_writes_every_file_and_the_summary_names_them(tmp_path: Path) -> None:
    results = _results(True)
    trajectories = [{"instance_id": "a__b-1", "variant": "policy"}]
    done = finish(results, meta_from(results), trajectories, tmp_path / "r")
    assert done.write_error is None and done.gate_failed is None  # no gate asked for
    assert any(line.startswith("reports: ") for line in done.lines)
    names = {p.name for p in (tmp_path / "r").iterdir()}
    assert {"decision.md", "decision.csv", "decision.html", "results.parquet"} <= names
    lines = (tmp_path / "r" / "trajectories.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in lines] == trajectories


@pytest.mark.parametrize("resolved", [True, False])
def test_the_gate_is_answered_from_the_table(tmp_path: Path, resolved: bool) -> None:
    results = _results(resolved)
    done = finish(results, meta_from(results), [], tmp_path, gate=True)
    if resolved:  # the candidate resolves what the baseline does not, at the same cost
        assert done.gate_failed is None
    else:
        assert done.gate_failed == "NOT ADOPTED — failed: resolve (tie 0.00 = 0.00)"


def test_a_report_that_cannot_be_written_keeps_the_summary(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    results = _results(True)
    done = finish(results, meta_from(results), [], blocked)
    assert done.write_error and str(blocked) in done.write_error
    assert any(line.startswith("policy") for line in done.lines)  # the table is still shown


def test_the_table_is_computed_once_for_the_summary_the_files_and_the_viewer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_toolpolicy.decide import report_files, table
    from pytest_toolpolicy.session import report

    computed = []

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        computed.append(args)
        return real(*args, **kwargs)

    real = table.decision_table
    for module in (report, report_files, table):  # the viewer imports it from table
        monkeypatch.setattr(module, "decision_table", counted)
    results = _results(True)
    done = finish(results, meta_from(results), [], tmp_path / "r", view=True)
    assert done.viewer and done.viewer.startswith("viewer: ") and "not built" not in done.viewer
    assert (tmp_path / "r" / "decision.csv").is_file()
    assert len(computed) == 1
