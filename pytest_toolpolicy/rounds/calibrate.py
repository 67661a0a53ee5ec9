"""Row 9's threshold, calibrated: which confidence feature and which τ best say whether a
requested call is necessary, fitted on the training split and scored on the test split only.

The objective is the spec's two-sided one: an omitted necessary call (withheld, labelled
necessary) and a spurious one (run, labelled not necessary) each count one error. Candidates
for τ are the midpoints between the training values (and both ends, which withhold nothing or
everything); ties go to withholding nothing, the spec's gate. The deterministic gate runs every
valid requested call, so it is scored beside the trigger on the same test points: its recall is
1 and its precision the share of necessary calls. AUC of the chosen feature on the test split,
with a bootstrap interval over instances (not points: an instance's points are not independent).
No figure here is computed on the points the threshold was fitted on. Pure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..policy.confidence import FEATURES, ConfidenceTrigger

NOT_CALLS = ("none", "ask_user", "stop")


@dataclass(frozen=True)
class Scores:
    points: int
    necessary: int
    errors: int  # omitted necessary + spurious
    precision: float  # of the calls run, the share necessary (NaN: none run)
    recall: float  # of the necessary calls, the share run (NaN: none necessary)


@dataclass(frozen=True)
class Calibration:
    trigger: ConfidenceTrigger | None  # None: nothing to fit on (no labelled, scored call)
    train: Scores | None
    test: Scores | None  # the trigger's, on the test split
    gate_test: Scores | None  # the deterministic gate's, on the same points
    auc: float  # of the feature, oriented as fitted, on the test split (NaN: one class)
    auc_ci: tuple[float, float]
    why: str  # what the evidence allows, in words
    simulated: bool = False  # fitted on sim's logprobs: seeded noise, not a model's confidence


def calls(frame: pd.DataFrame) -> pd.DataFrame:
    """The policy arm's labelled decision points where the reply asked for a call: what the
    trigger judges (another arm's replies answer another prompt, in another format)."""
    asked = (frame["arm"] == "policy") & ~frame["move"].isin(NOT_CALLS) & frame["necessary"].notna()
    return frame[asked]


def fit(frame: pd.DataFrame, seed: int = 0) -> Calibration:
    points = calls(frame)
    train = points[points["split"] == "train"]
    test = points[points["split"] == "test"]
    best: tuple[int, int, ConfidenceTrigger] | None = None
    for feature in FEATURES:
        usable = train[train[feature].notna()]
        if usable.empty:
            continue
        values = np.sort(usable[feature].unique())
        taus = [values[0] - 1.0, *((values[1:] + values[:-1]) / 2), values[-1] + 1.0]
        for side in ("below", "above"):
            for tau in taus:
                trigger = ConfidenceTrigger(feature, float(tau), side)
                errors = _score(trigger, usable).errors
                withheld = int((~_runs(trigger, usable)).sum())
                key = (errors, withheld)  # fewer errors, then fewer calls withheld
                if best is None or key < best[:2]:
                    best = (errors, withheld, trigger)
    if best is None:
        return Calibration(None, None, None, None, math.nan, (math.nan, math.nan),
                           "no labelled call with logprobs in the training split")  # fmt: skip
    trigger = best[2]
    simulated = "logprobs_source" in points and bool(
        (points["logprobs_source"] == "simulated").any()
    )
    scored_test = test[test[trigger.feature].notna()]
    auc, ci = _auc(trigger, scored_test, seed)
    return Calibration(
        trigger=trigger,
        train=_score(trigger, train[train[trigger.feature].notna()]),
        test=_score(trigger, scored_test) if not scored_test.empty else None,
        gate_test=_gate(scored_test) if not scored_test.empty else None,
        auc=auc,
        auc_ci=ci,
        why=_why(train, scored_test),
        simulated=simulated,
    )


def _runs(trigger: ConfidenceTrigger, points: pd.DataFrame) -> pd.Series:
    return points[trigger.feature].map(lambda v: trigger.necessary(float(v)) is not False)


def _score(trigger: ConfidenceTrigger, points: pd.DataFrame) -> Scores:
    return _scores(_runs(trigger, points).to_numpy(bool), points["necessary"].to_numpy(bool))


def _gate(points: pd.DataFrame) -> Scores:
    return _scores(np.ones(len(points), bool), points["necessary"].to_numpy(bool))


def _scores(run: np.ndarray, necessary: np.ndarray) -> Scores:
    kept_necessary = int((run & necessary).sum())
    return Scores(
        points=len(run),
        necessary=int(necessary.sum()),
        errors=int((run & ~necessary).sum() + (~run & necessary).sum()),
        precision=kept_necessary / int(run.sum()) if run.any() else math.nan,
        recall=kept_necessary / int(necessary.sum()) if necessary.any() else math.nan,
    )


def auc_of(scores: np.ndarray, labels: np.ndarray) -> float:
    """The probability a necessary point scores above an unnecessary one (ties count half)."""
    pos, neg = scores[labels], scores[~labels]
    if not len(pos) or not len(neg):
        return math.nan
    greater = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(greater / (len(pos) * len(neg)))


def _auc(
    trigger: ConfidenceTrigger, points: pd.DataFrame, seed: int, draws: int = 1000
) -> tuple[float, tuple[float, float]]:
    if points.empty:
        return math.nan, (math.nan, math.nan)
    sign = -1.0 if trigger.necessary_when == "below" else 1.0  # higher score: more necessary
    score = sign * points[trigger.feature].to_numpy(float)
    label = points["necessary"].to_numpy(bool)
    auc = auc_of(score, label)
    if math.isnan(auc):
        return auc, (math.nan, math.nan)
    return auc, auc_interval(score, label, points["instance_id"].to_numpy(), seed, draws)


def auc_interval(
    scores: np.ndarray, labels: np.ndarray, groups: np.ndarray, seed: int, draws: int = 1000
) -> tuple[float, float]:
    """The 95% percentile interval of the AUC, resampling whole groups (instances: their
    points are not independent); draws holding one class only are left out."""
    members = [np.flatnonzero(groups == g) for g in np.unique(groups)]
    rng = np.random.default_rng(seed)
    drawn = []
    for _ in range(draws):
        picked = np.concatenate([members[i] for i in rng.integers(0, len(members), len(members))])
        value = auc_of(scores[picked], labels[picked])
        if not math.isnan(value):
            drawn.append(value)
    if not drawn:
        return math.nan, math.nan
    return float(np.percentile(drawn, 2.5)), float(np.percentile(drawn, 97.5))


def _why(train: pd.DataFrame, test: pd.DataFrame) -> str:
    notes = []
    for name, part in (("training", train), ("test", test)):
        yes = int(part["necessary"].astype(bool).sum()) if len(part) else 0
        if len(part) == 0:
            notes.append(f"the {name} split has no labelled call")
        elif yes in (0, len(part)):
            kind = "necessary" if yes else "not necessary"
            notes.append(f"every {name} call is labelled {kind}: nothing to separate")
    return "; ".join(notes) or "both splits hold both classes"
