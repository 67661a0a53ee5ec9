"""The results frame recomputed from saved trajectories alone.

Every measure of the decision table is a function of ``trajectories.jsonl`` (the necessary-call
counts of the counterfactual reruns are kept in each trajectory's meta), so a user can rebuild
the table, or a different one, without rerunning anything:

    results = results_from_trajectories("reports/<run>/trajectories.jsonl")
    decision_table(results)
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from ..bench.gold import GOLD_DIR
from ..types import load_trajectories
from .row import row_of, spec_of


def results_from_trajectories(
    path: str | os.PathLike[str], gold_dir: Path | None = GOLD_DIR
) -> pd.DataFrame:
    # Wall time is not part of a trajectory: row_of leaves duration_s NaN.
    rows = [row_of(t, None, spec_of(t), gold_dir) for t in load_trajectories(path)]
    return pd.DataFrame(rows)
