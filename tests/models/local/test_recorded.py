"""The committed recordings of real-model A/Bs replayed with no server and no model file: the
same decision table, every reply answered from the recording. A change to a prompt, a schema or
a request setting misses a recording and fails here, so the offline A/B never changes silently;
re-record it then.

- ``local-smoke``: CI's smoke A/B (``make smoke-local RECORD=1``): gemma-3-270m, a tiny *base*
  model, 2 instances, 2 turns.
- ``qwen-ab``: the A/B on a model that acts (``make eval-qwen RECORD=1``): Qwen2.5-Coder-1.5B-
  Instruct, a small *instruct* coding model (Q4_K_M), both arms and the ``issue-first``
  candidate: the whole bundled benchmark (25 instances) and the first 4 of its seeded draw
  (what ``make eval-qwen`` runs by default), from the one recording. Paths reach its prompts
  only relative to the workspace (``primitives/volatile.py``), so it replays from any report
  directory on any machine.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).parents[3]
DATA = ROOT / "tests" / "data"
TEST_AB = ROOT / "evals" / "test_ab.py"


@dataclass(frozen=True)
class Recording:
    folder: str
    model: str
    options: tuple[str, ...]  # the Makefile's for that run (a server's threads change no request)
    items: int
    table: str = "decision.csv"  # in the folder: the table the run printed


QWEN = (
    "--toolpolicy-seed=0", "--toolpolicy-max-output=current=1024",
    "--toolpolicy-local-threads=1", "--toolpolicy-max-turns=6",
    f"--toolpolicy-candidates={ROOT / 'evals' / 'qwen-candidates.toml'}",
)  # fmt: skip
QWEN_SAMPLE = 25  # the whole bundled benchmark: `make eval-qwen RECORD=1 QWEN_SAMPLE=25`
RECORDINGS = [
    pytest.param(
        Recording(
            "local-smoke",
            "local:gemma3-270m",
            ("--toolpolicy-seed=0", "--toolpolicy-max-output=current=512",
             "--toolpolicy-sample=2", "--toolpolicy-max-turns=2"),
            4,
        ),
        id="local-smoke",
    ),
    # The first 4 of the seeded draw (samples nest), from the same recording: what
    # `make eval-qwen` runs by default.
    pytest.param(
        Recording("qwen-ab", "local:qwen2.5-coder-1.5b", (*QWEN, "--toolpolicy-sample=4"), 12,
                  "decision-sample4.csv"),
        id="qwen-ab-sample4",
    ),
    pytest.param(
        Recording("qwen-ab", "local:qwen2.5-coder-1.5b",
                  (*QWEN, f"--toolpolicy-sample={QWEN_SAMPLE}"), 3 * QWEN_SAMPLE,
                  f"decision-sample{QWEN_SAMPLE}.csv"),
        id="qwen-ab",
    ),
]  # fmt: skip
# Counts of which worker reached a shared state first, not measures of the runs.
VOLATILE = ("cf_tool_executions",)


def _table(path: Path) -> pd.DataFrame:
    table = pd.read_csv(path, index_col=0)
    return table.drop(columns=[c for c in table.columns if c in VOLATILE])


@pytest.mark.parametrize("recording", RECORDINGS)
def test_a_recording_replays_to_the_same_table_without_a_server(
    recording: Recording, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = DATA / recording.folder
    if not (folder / "completions.sqlite").is_file():
        pytest.fail(f"no recording at {folder}")
    monkeypatch.delenv("TOOLPOLICY_LOCAL_URL", raising=False)
    copy = pytester.path / "completions.sqlite"
    copy.write_bytes((folder / "completions.sqlite").read_bytes())
    pytester.makepyfile(test_ab=TEST_AB.read_text(encoding="utf-8"))
    report = pytester.path / "report"
    result = pytester.runpytest_subprocess(
        "--toolpolicy=ab",
        f"--toolpolicy-model={recording.model}",
        *recording.options,
        "-p",
        "no:cacheprovider",
        "--toolpolicy-cache=replay",
        f"--toolpolicy-cache-file={copy}",
        f"--toolpolicy-report={report}",
        "test_ab.py",
    )
    result.assert_outcomes(passed=recording.items)
    assert "replay miss" not in result.stdout.str()
    recorded = _table(folder / recording.table)
    replayed = _table(report / "decision.csv")
    # Columns added since the recording (who played the arm, what it hid) are new facts, not
    # different figures: every recorded column must come out the same.
    assert set(recorded.columns) <= set(replayed.columns)
    pd.testing.assert_frame_equal(replayed[recorded.columns], recorded)
    rows = pd.read_parquet(report / "results.parquet")
    assert set(rows["status"]) == {"ok"} and (rows["model"] == recording.model).all()
