"""Which rows a variant's measures count: the measured items (an endpoint's model error measured
as not resolved), on the sample every variant shares, with the instances a gold label scores.

All variants are measured on the same instances: one whose item was not measured in any variant
(a harness fault, grading that could not run here) is excluded from every variant (and counted),
so no comparison mixes two different samples. When that leaves a variant nothing, its row shows
its own measured items instead, marked ``sample == "own"`` (``measures.py``).
"""

from __future__ import annotations

import pandas as pd

from .schema import GOLD_HAND as HAND
from .schema import GOLD_NONE as UNLABELLED
from .schema import GOLD_SOURCES as SOURCES

# Which items a row measures: the sample shared by every variant; this variant's own measured items
# (the shared sample left it none); or none at all (every item failed).
SHARED, OWN, NONE = "shared", "own", "none"
# The statuses a row is measured with: "model_error" as not resolved (the endpoint ended it).
MEASURED = frozenset({"ok", "model_error"})
# A run is identified by its instance, seed and trial; anything else differing is the variant.
RUN_KEYS = ("instance_id", "seed", "trial")


def trials_of(rows: pd.DataFrame) -> pd.Series:
    """Each row's trial (1 where a row predates trials, or failed before it had one)."""
    if "trial" not in rows:
        return pd.Series(1, index=rows.index)
    return pd.to_numeric(rows["trial"], errors="coerce").fillna(1).astype(int)


def run_keys(rows: pd.DataFrame) -> pd.Series:
    """(instance, seed, trial) of each row: the same pairing as the paired statistics."""
    return pd.Series(
        list(zip(rows["instance_id"], rows["seed"], trials_of(rows), strict=True)),
        index=rows.index,
    )


def measured(rows: pd.DataFrame) -> pd.Series:
    """Which rows are measured (``MEASURED``)."""
    return rows["status"].isin(MEASURED)


def resolved_as_measured(rows: pd.DataFrame) -> pd.Series:
    """Each row's resolved flag as the measures read it: a model_error item never resolved."""
    resolved = pd.to_numeric(rows["resolved"], errors="coerce").fillna(0).astype(bool)
    return resolved & (rows["status"] != "model_error")


def incomplete_instances(results: pd.DataFrame) -> set[tuple[object, ...]]:
    """(instance, seed, trial) runs with an item that was not measured (a harness fault,
    grading that could not run), left out of every variant."""
    if not len(results):
        return set()
    return set(run_keys(results[~measured(results)]))


def label_sources(rows: pd.DataFrame) -> pd.Series:
    """Each row's ``gold_source``; a row saved before the column existed was scored on a
    hand-written label iff it scored any selection."""
    attempted = pd.to_numeric(rows["selection_attempted"], errors="coerce").fillna(0)
    inferred = pd.Series(UNLABELLED, index=rows.index).where(attempted == 0, HAND)
    if "gold_source" not in rows:
        return inferred
    return rows["gold_source"].where(rows["gold_source"].isin(SOURCES), inferred)


def unlabelled_instances(results: pd.DataFrame) -> set[object]:
    """Instances with a measured item scored on no gold label: left out of every variant's
    selection accuracy, so every variant is scored on the same labelled instances."""
    if not len(results):
        return set()
    ok = results[measured(results)]
    return set(ok.loc[label_sources(ok) == UNLABELLED, "instance_id"])
