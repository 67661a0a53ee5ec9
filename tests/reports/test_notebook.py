"""reports/decision.ipynb runs headless on a report written by write_report."""

from pathlib import Path

import pandas as pd
import pytest

from pytest_toolpolicy.decide.report_files import write_report

from ..decide.results_factory import frame, variant_rows

nbclient = pytest.importorskip("nbclient")
nbformat = pytest.importorskip("nbformat")

NOTEBOOK = Path(__file__).resolve().parents[2] / "reports" / "decision.ipynb"


def _results(trials: int = 1) -> pd.DataFrame:
    rows = []
    for t in range(1, trials + 1):
        at = {"trial": t} if trials > 1 else {}
        # One instance the policy abstains on although it was resolvable (a false abstention).
        rows += variant_rows("current", [True] * 11 + [False] * 9, cost_usd=0.2, tokens=1500,
                             **at)  # fmt: skip
        rows += variant_rows("policy", [True] * 15 + [False] * 4, cost_usd=0.1, calls=3, **at)
        rows += variant_rows("policy", [False], start=19, abstained=True, calls=3, **at)
        rows += variant_rows("cand:issue-first", [True] * 15 + [False] * 5, cost_usd=0.08,
                             calls=3, **at)  # fmt: skip
        rows += variant_rows("policy-no:retrieve.embed", [True] * 15 + [False] * 5, cost_usd=0.1,
                             calls=3, gate_acts='{"retrieve.embed": 0}', **at)  # fmt: skip
        rows += variant_rows("policy-no:trust.round_trip", [True] * 12 + [False] * 8,
                             cost_usd=0.1, calls=3, tokens=1120, **at)  # fmt: skip
    return frame(rows)


# ~5 s a kernel: make test executes the notebook once, on a report with trials
@pytest.mark.parametrize("trials", [pytest.param(1, marks=pytest.mark.slow), 3])
def test_the_notebook_shows_the_decision_and_its_plots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trials: int
) -> None:
    meta = {"model": "sim:flaky", "dataset": "evals/instances", "n_instances": 20,
            "n_underspecified": 0, "tests_visible": True, "seed": 0, "is_sim": True,
            "sim_profile": "flaky", "report_dir": None}  # fmt: skip
    write_report(_results(trials), meta, tmp_path / "run")
    monkeypatch.setenv("TOOLPOLICY_REPORT_DIR", str(tmp_path / "run"))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), "commit it cleared"

    nbclient.NotebookClient(
        nb, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()

    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert f"report: {tmp_path / 'run'}" in text
    assert "verdict: ADOPT" in text
    assert "sim is a fault-injecting simulator" in text
    assert "gate trust.round_trip: keep (resolve −0.15, tokens +12%)" in text
    assert "gate retrieve.embed: delete" in text
    assert "candidate issue-first: ADOPT" in text  # a verdict per candidate
    assert "policy: power: " in text and "cand:issue-first: power: " in text
    tables = "".join(o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {}))
    assert "false_abstention" in tables and "detectable_delta" in tables
    if trials > 1:
        assert "pass_k" in tables and "sd_resolve" in tables
        assert "per-instance pass rate over the trials:" in text
    else:
        assert "one trial per item: no spread" in text
    figures = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(figures) == 2
    assert any("text/html" in o.get("data", {}) for o in outputs)  # the table itself
