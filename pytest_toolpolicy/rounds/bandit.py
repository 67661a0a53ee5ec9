"""Row 12 in reach without weights: a bandit that tunes row 9's τ online, and its regret.

The arms are thresholds for one confidence feature: the training split's quantiles, and
"withhold nothing" (the spec's gate). Instances arrive one at a time in a seeded order (each
trial of an instance is its own arrival); the bandit picks a τ by UCB1, is paid the instance's
reward under that τ, and learns. Regret after ``t`` arrivals is what the best fixed τ in
hindsight would have earned over them, less what the bandit earned.

The reward is the share of the instance's labelled calls the τ judges right (run where
necessary, withheld where not). It is computed from the labels, not from a rerun: the terminal
reward (resolved or not) of a τ the run did not use is unknown without running it again, and on
a model that resolves nothing it is 0 for every τ. Pure; seeded.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..policy.confidence import ConfidenceTrigger
from ..run.bandit import ucb1
from .calibrate import calls

ARMS = 6  # quantile thresholds, besides "withhold nothing"


@dataclass(frozen=True)
class Replay:
    feature: str
    taus: tuple[float | None, ...]  # None: withhold nothing (the spec's gate)
    picks: tuple[int, ...]  # the arm chosen at each arrival
    rewards: tuple[float, ...]
    regret: tuple[float, ...]  # cumulative, after each arrival
    best: float | None  # the best fixed τ in hindsight (None: withhold nothing)


def replay(frame: pd.DataFrame, feature: str = "lp_mean", seed: int = 0) -> Replay | None:
    """The bandit over every labelled, scored call of ``frame`` (None: nothing to replay)."""
    points = calls(frame)
    points = points[points[feature].notna()]
    if points.empty:
        return None
    train = points[points["split"] == "train"][feature]
    quantiles = np.quantile(train if len(train) else points[feature], np.linspace(0, 1, ARMS))
    taus: tuple[float | None, ...] = (None, *sorted({float(q) for q in quantiles}))
    arrivals = [group for _, group in points.groupby(["instance_id", "trial"], sort=True)]
    order = np.random.default_rng(seed).permutation(len(arrivals))
    table = np.array([[_reward(tau, feature, arrivals[i]) for tau in taus] for i in order])
    pulls, totals = [0] * len(taus), [0.0] * len(taus)
    picks, rewards = [], []
    for row in table:
        arm = ucb1(pulls, pulls, totals)  # the live bandit's rule; every pull is paid at once
        pulls[arm] += 1
        totals[arm] += row[arm]
        picks.append(arm)
        rewards.append(float(row[arm]))
    best_sum = np.cumsum(table, axis=0)  # each arm's earnings so far, had it been pulled always
    earned = np.cumsum(rewards)
    regret = tuple(float(best_sum[t].max() - earned[t]) for t in range(len(table)))
    return Replay(
        feature, taus, tuple(picks), tuple(rewards), regret, taus[int(best_sum[-1].argmax())]
    )


def _reward(tau: float | None, feature: str, points: pd.DataFrame) -> float:
    necessary = points["necessary"].to_numpy(bool)
    if tau is None:
        runs = np.ones(len(points), bool)
    else:
        trigger = ConfidenceTrigger(feature, tau, "below")
        runs = np.array([trigger.necessary(float(v)) is not False for v in points[feature]])
    return float((runs == necessary).mean())


def render(result: Replay | None, marks: int = 5) -> str:
    if result is None:
        return "bandit (row 12): no labelled call with logprobs to replay"
    n = len(result.regret)
    at = sorted({max(1, round(n * k / marks)) for k in range(1, marks + 1)})
    curve = ", ".join(f"{t}: {result.regret[t - 1]:.2f}" for t in at)
    best = "withhold nothing" if result.best is None else f"tau {result.best:.3f}"
    return (
        f"bandit (row 12, UCB1 over {len(result.taus)} thresholds of {result.feature}; reward from"
        f" the labels, not reruns): {n} arrivals, cumulative regret {curve};"
        f" best fixed in hindsight: {best}"
    )
