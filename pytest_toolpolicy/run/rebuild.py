"""The results frame recomputed from saved trajectories: each trajectory's row as the session
made it (``row.py``), so the decision table can be rebuilt, or a different one built, without
rerunning anything:

    results = results_from_trajectories("reports/<run>/trajectories.jsonl")
    decision_table(results)
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from ..bench.gold import GOLD_DIR
from ..decide.results import results_frame
from ..types import load_trajectories
from .row import row_of, spec_of


def results_from_trajectories(
    path: str | os.PathLike[str], gold_dir: Path | None = GOLD_DIR
) -> pd.DataFrame:
    rows = [row_of(t, spec_of(t), gold_dir) for t in load_trajectories(path)]
    return results_frame(rows)
