"""The committed recording of CI's real smoke A/B (``make smoke-local RECORD=1``: the live
gemma-3-270m server, a tiny *base* model, 2 instances, 2 turns) replayed with no server and no
model file: the same decision table, every reply answered from the recording. A change to a
prompt, a schema or a request setting misses the recording and fails here, so the offline A/B
never changes silently; re-record it then."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).parents[3]
SMOKE = ROOT / "tests" / "data" / "local-smoke"
TEST_AB = ROOT / "evals" / "test_ab.py"
# Exactly the smoke's options (Makefile: LOCAL_OPTIONS and smoke-local).
OPTIONS = [
    "--toolpolicy=ab",
    "--toolpolicy-model=local:gemma3-270m",
    "--toolpolicy-seed=0",
    "--toolpolicy-max-output=current=512",
    "--toolpolicy-sample=2",
    "--toolpolicy-max-turns=2",
    "-p",
    "no:cacheprovider",
]
# Counts of which worker reached a shared state first, not measures of the runs.
VOLATILE = ("cf_tool_executions",)


def _table(path: Path) -> pd.DataFrame:
    table = pd.read_csv(path, index_col=0)
    return table.drop(columns=[c for c in table.columns if c in VOLATILE])


@pytest.mark.skipif(not (SMOKE / "completions.sqlite").is_file(), reason="no recording yet")
def test_the_recorded_smoke_replays_to_the_same_table_without_a_server(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOOLPOLICY_LOCAL_URL", raising=False)
    recording = pytester.path / "completions.sqlite"
    recording.write_bytes((SMOKE / "completions.sqlite").read_bytes())
    pytester.makepyfile(test_ab=TEST_AB.read_text(encoding="utf-8"))
    report = pytester.path / "report"
    result = pytester.runpytest_subprocess(
        *OPTIONS,
        "--toolpolicy-cache=replay",
        f"--toolpolicy-cache-file={recording}",
        f"--toolpolicy-report={report}",
        "test_ab.py",
    )
    result.assert_outcomes(passed=4)
    assert "replay miss" not in result.stdout.str()
    recorded = _table(SMOKE / "decision.csv")
    replayed = _table(report / "decision.csv")
    # Columns added since the recording (who played the arm, what it hid) are new facts, not
    # different figures: every recorded column must come out the same.
    assert set(recorded.columns) <= set(replayed.columns)
    pd.testing.assert_frame_equal(replayed[recorded.columns], recorded)
    rows = pd.read_parquet(report / "results.parquet")
    assert set(rows["status"]) == {"ok"} and (rows["model"] == "local:gemma3-270m").all()
