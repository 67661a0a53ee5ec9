"""Row 10's probe: fitted on the training split's prompts' hidden states, scored on the test
split's only, beside the confidence feature on the same points."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from pytest_toolpolicy.rounds.probe import fit_logistic, render, score


def frame(n: int = 40) -> pd.DataFrame:
    rows = []
    for k in range(n):
        needed = k % 2 == 0
        rows.append({"instance_id": f"i{k // 2}", "split": "test" if k >= 24 else "train",
                     "arm": "policy", "reselection": False, "necessary": needed,
                     "prompt": f"{'search first' if needed else 'nothing to do'} #{k}",
                     "lp_mean": -1.0 if needed else -0.2})  # fmt: skip
    return pd.DataFrame(rows).astype({"necessary": "boolean"})


def embed(texts: list[str]) -> np.ndarray:
    """A 'hidden state' whose first axis says whether the prompt needs a search, plus noise."""
    rng = np.random.default_rng(0)
    return np.array([[1.0 if t.startswith("search") else -1.0, *rng.normal(size=7)]
                     for t in texts])  # fmt: skip


def test_the_probe_separates_what_the_state_separates() -> None:
    result = score(frame(), embed)
    assert (result.train_points, result.test_points) == (24, 16)
    assert result.auc == 1.0 and result.auc_ci == (1.0, 1.0)  # every resample separates
    assert result.feature_auc == 1.0  # lower confidence where a call was needed, here
    assert "AUC 1.000" in render(result)
    # separable: no error at its threshold, where the gate runs every unneeded call
    assert result.errors == 0 and result.gate_errors == 16 - result.test_necessary > 0
    assert result.brier < 0.1 and "Brier" in render(result) and "ECE" in render(result)


def test_calibration_error_is_the_gap_between_said_and_seen() -> None:
    from pytest_toolpolicy.rounds.probe import ece_of

    labels = np.array([True, False, True, False])
    assert ece_of(np.array([0.5, 0.5, 0.5, 0.5]), labels) == 0.0  # says 0.5, sees half
    assert ece_of(np.array([0.9, 0.9, 0.9, 0.9]), labels) == pytest.approx(0.4)
    # each bin weighted by its share: off by 0.1 in the top bin, by 0.4 in the bottom one
    four = np.array([0.9, 0.9, 0.1, 0.1])
    assert ece_of(four, np.array([1, 1, 1, 0], bool)) == pytest.approx(0.5 * 0.1 + 0.5 * 0.4)


def test_logistic_weights_point_the_right_way() -> None:
    x = np.array([[2.0], [1.0], [-1.0], [-2.0]])
    weights = fit_logistic(x, np.array([1.0, 1.0, 0.0, 0.0]))
    assert weights[0] > 0


def test_thin_evidence_is_said_and_nothing_is_scored() -> None:
    one_class = frame().assign(necessary=True).astype({"necessary": "boolean"})
    result = score(one_class, embed)
    assert math.isnan(result.auc) and "one class only" in result.why
    assert "too thin" in render(result)
    assert "not available (no states)" in render(None, "no states")


def test_the_fitted_probe_is_written_and_named_as_a_candidate(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from pytest_toolpolicy.rounds.rounds_file import add_probe
    from pytest_toolpolicy.run.candidates_file import read_candidates

    result = score(frame(), embed)
    assert result.probe is not None and len(result.probe.weights) == 8
    candidates = tmp_path / "candidates.toml"
    candidates.write_text('[candidate.hybrid]\nretrieve = "hybrid"\n')
    report = tmp_path / "report"
    report.mkdir()
    for _ in range(2):  # a second run replaces the first's entry
        add_probe(report, result.probe, candidates)
    found, _ = read_candidates(candidates)
    assert [c.name for c in found] == ["hybrid", "probe"]
    assert found[1].probe is not None and found[1].probe.weights == result.probe.weights
