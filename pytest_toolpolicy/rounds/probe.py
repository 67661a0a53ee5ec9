"""Row 10, measured: a linear probe on the model's hidden state before it replies, predicting
whether a tool call is necessary at that decision point.

The hidden state is llama.cpp's pooled embedding of the prompt the model was shown (the last
token's, from the same GGUF served in its embeddings mode, ``ServerSettings(embedding=True)``;
the prompt is its messages' text, not the chat template's exact tokens). The probe is an
L2-regularised logistic regression over standardised states, fitted on the training split's
points and scored on the test split's only: AUC with a bootstrap interval over instances, and
the confidence trigger's feature scored on the same test points beside it. Only ``local:``
models expose hidden states; another model's probe is reported as not available. Pure but for
``embed``, which is passed in.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..policy.probe import LinearProbe
from .calibrate import auc_interval, auc_of

Embed = Callable[[list[str]], np.ndarray]
L2 = 1.0
STEPS = 500
VERDICT_POINTS = 20  # fewer test points than this: an AUC, but no verdict from it
BINS = 5


@dataclass(frozen=True)
class ProbeResult:
    train_points: int
    test_points: int
    test_necessary: int
    auc: float  # the probe's, test split
    auc_ci: tuple[float, float]
    feature_auc: float  # the confidence feature's (higher: more necessary), same test points
    why: str
    probe: LinearProbe | None = None  # the fitted probe (None: too thin to fit)
    # calibration of its probability on the test split: Brier score, and the expected
    # calibration error over BINS equal-width bins
    brier: float = math.nan
    ece: float = math.nan
    # two-sided errors on the test split (an omitted necessary call, a spurious one): the
    # probe at its threshold, and the deterministic gate, which runs every call
    errors: int = 0
    gate_errors: int = 0


def points(frame: pd.DataFrame) -> pd.DataFrame:
    """The policy arm's labelled first selections with a recorded prompt."""
    keep = (
        (frame["arm"] == "policy")
        & frame["necessary"].notna()
        & ~frame["reselection"].astype(bool)
        & (frame["prompt"].str.len() > 0)
    )
    return frame[keep].reset_index(drop=True)


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = L2, steps: int = STEPS) -> np.ndarray:
    """Weights (bias last) of an L2-regularised logistic regression, by gradient descent:
    deterministic, and enough for a few hundred points of a few hundred dimensions."""
    design = np.hstack([x, np.ones((len(x), 1))])
    weights = np.zeros(design.shape[1])
    rate = 0.5
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(design @ weights)))
        grad = design.T @ (p - y) / len(y)
        grad[:-1] += l2 * weights[:-1] / len(y)
        weights -= rate * grad
    return weights


def score(
    frame: pd.DataFrame, embed: Embed, feature: str = "lp_mean", seed: int = 0
) -> ProbeResult:
    data = points(frame)
    train = data[data["split"] == "train"]
    test = data[data["split"] == "test"]
    why = _thin(train, test)
    if why:
        return ProbeResult(len(train), len(test), _yes(test), math.nan, (math.nan, math.nan),
                           math.nan, why)  # fmt: skip
    states = embed(list(data["prompt"]))
    x_train, x_test = states[train.index], states[test.index]
    mean, std = x_train.mean(axis=0), x_train.std(axis=0) + 1e-6
    weights = fit_logistic((x_train - mean) / std, train["necessary"].to_numpy(float))
    logits = np.hstack([(x_test - mean) / std, np.ones((len(test), 1))]) @ weights
    labels = test["necessary"].to_numpy(bool)
    auc = auc_of(logits, labels)
    ci = auc_interval(logits, labels, test["instance_id"].to_numpy(), seed)
    values = test[feature].to_numpy(float)
    scored = ~np.isnan(values)
    # the trigger withholds confident calls: lower confidence, more necessary
    feature_auc = auc_of(-values[scored], labels[scored]) if scored.any() else math.nan
    probe = LinearProbe(
        tuple(float(w) for w in weights[:-1]), float(weights[-1]),
        tuple(float(m) for m in mean), tuple(float(v) for v in std),
    )  # fmt: skip
    chance = 1 / (1 + np.exp(-logits))
    return ProbeResult(len(train), len(test), int(labels.sum()), auc, ci, feature_auc,
                       "both splits hold both classes", probe,
                       brier=float(np.mean((chance - labels) ** 2)), ece=ece_of(chance, labels),
                       errors=int(((logits > probe.threshold) != labels).sum()),
                       gate_errors=int((~labels).sum()))  # fmt: skip


def ece_of(chance: np.ndarray, labels: np.ndarray, bins: int = BINS) -> float:
    """Expected calibration error: over equal-width bins of the predicted probability, the
    gap between mean prediction and observed rate, weighted by the bin's share of points."""
    which = np.minimum((chance * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        inside = which == b
        if inside.any():
            total += inside.mean() * abs(chance[inside].mean() - labels[inside].mean())
    return float(total)


def _yes(part: pd.DataFrame) -> int:
    return int(part["necessary"].astype(bool).sum()) if len(part) else 0


def _thin(train: pd.DataFrame, test: pd.DataFrame) -> str:
    for name, part in (("training", train), ("test", test)):
        if _yes(part) in (0, len(part)):
            what = "no point" if not len(part) else "one class only"
            return f"the {name} split has {what}: too thin to fit or score a probe"
    return ""


def render(result: ProbeResult | None, why_not: str = "") -> str:
    if result is None:
        return f"necessity probe (row 10): not available ({why_not})"
    if math.isnan(result.auc):
        return (
            f"necessity probe (row 10): {result.train_points} training and {result.test_points}"
            f" test points — {result.why}"
        )
    low, high = result.auc_ci
    thin = (
        f"; too few test points for a verdict (under {VERDICT_POINTS})"
        if result.test_points < VERDICT_POINTS
        else ""
    )
    return (
        f"necessity probe (row 10): fitted on {result.train_points} points, scored on"
        f" {result.test_points} ({result.test_necessary} necessary): AUC {result.auc:.3f}"
        f" [95% CI {low:.3f}, {high:.3f}], bootstrap over instances; the confidence feature"
        f" on the same points: AUC {result.feature_auc:.3f}; calibration: Brier"
        f" {result.brier:.3f}, ECE {result.ece:.3f}; errors (omitted + spurious) at its"
        f" threshold {result.errors}, the deterministic gate's {result.gate_errors}{thin}"
    )
