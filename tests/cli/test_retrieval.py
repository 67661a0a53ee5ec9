"""``toolpolicy retrieval``: row 13's table from the shell, malformed rows and trajectories
skipped and said once each, an unreadable dataset one line and exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_toolpolicy.cli import main

from ..malformed import one_line, write_malformed
from ..rounds.test_labels import READ, run, turn


def test_the_command_prints_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["retrieval", "--no-embed"]) == 0
    out = capsys.readouterr().out
    assert "| keyword | 21 |" in out and "embed" not in out.split("|---|")[1]


def test_the_command_skips_malformed_rows_and_trajectories_and_says_so_once_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    patch = "--- a/pkg/mod.py\n+++ b/pkg/mod.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n"
    good = [{"instance_id": f"r-{n}", "problem_statement": "pkg.mod.f returns 1", "patch": patch}
            for n in (1, 2)]  # fmt: skip
    rows = tmp_path / "rows.jsonl"
    torn = write_malformed(rows, good, {**good[0], "instance_id": "r-9", "patch": ["a list"]})
    assert main(["retrieval", "--no-embed", "--dataset", str(rows)]) == 0
    out, err = capsys.readouterr()
    assert "first decision points, 2 of 2 rows" in out and "| keyword | 2 |" in out
    assert one_line(err) == (
        f"toolpolicy retrieval: {rows}:2: patch is not a string (2 malformed lines skipped:"
        f" 2, {torn})"
    )
    report = tmp_path / "report"
    report.mkdir()
    trajectories = [run("r-1", turn(0, READ)).to_dict()]
    torn = write_malformed(report / "trajectories.jsonl", trajectories, {"turns": []})
    argv = ["retrieval", "--no-embed", "--dataset", "bundled", "--report", str(report)]
    assert main(argv) == 0
    err = capsys.readouterr().err
    named = [line for line in err.splitlines() if "trajectories.jsonl" in line]
    assert "Traceback" not in err and named == [
        f"toolpolicy retrieval: {report / 'trajectories.jsonl'}:2: the record lacks instance_id"
        f" (2 malformed lines skipped: 2, {torn})"
    ]
    (tmp_path / "rows.json").write_text('[{"instance_id": "r-1",\n "patch": "x"')
    assert main(["retrieval", "--no-embed", "--dataset", str(tmp_path / "rows.json")]) == 2
    assert one_line(capsys.readouterr().err).startswith(
        f"toolpolicy retrieval: {tmp_path / 'rows.json'}:2: not JSON: Expecting"
    )
