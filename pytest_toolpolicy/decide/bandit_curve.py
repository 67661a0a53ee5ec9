"""A bandit candidate's curve read off its rows (row 12): how often each arm (a tau) was pulled,
what it earned, and the regret against the best arm's mean — estimated, since an arm not pulled
on a run has no reward there. The live bandit that picks the arms is ``run/bandit.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd


@dataclass(frozen=True)
class Curve:
    arms: tuple[str, ...]
    pulls: tuple[int, ...]
    means: tuple[float, ...]
    regret: tuple[float, ...]  # estimated, cumulative, after each run in the order they began


def curve(rows: pd.DataFrame) -> Curve | None:
    """A bandit candidate's curve from its measured rows (None: no run of it chose an arm)."""
    rows = rows[rows["bandit_arm"].astype(str) != ""]
    rows = rows[rows["status"] == "ok"].sort_values("bandit_seq")
    if rows.empty:
        return None
    arms = tuple(dict.fromkeys(rows["bandit_arm"].astype(str)))
    rewards = rows["resolved"].astype(float)
    by_arm = rewards.groupby(rows["bandit_arm"].astype(str))
    means = {arm: float(by_arm.get_group(arm).mean()) for arm in arms}
    best = max(means.values())
    regret = tuple(float(v) for v in (best - rewards).cumsum())
    return Curve(
        arms,
        tuple(int(by_arm.get_group(a).size) for a in arms),
        tuple(means[a] for a in arms),
        regret,
    )


def line_of(rows: pd.DataFrame, marks: int = 5) -> str:
    """A variant's bandit as one line: pulls and mean reward per arm and the regret curve
    ("" where no run of it chose an arm)."""
    if "bandit_arm" not in rows:
        return ""
    # A column no run filled is read back as floats (all NaN), where "" is no fill value.
    chosen = rows["bandit_arm"].astype(object).fillna("")
    found = curve(rows.assign(bandit_arm=chosen))
    if found is None:
        return ""
    n = len(found.regret)
    at = sorted({max(1, round(n * k / marks)) for k in range(1, marks + 1)})
    arms = ", ".join(
        f"{a} {p}x ({m:.2f})" for a, p, m in zip(found.arms, found.pulls, found.means, strict=True)
    )
    regret = ", ".join(f"{t}: {found.regret[t - 1]:.2f}" for t in at)
    return (
        f"bandit (UCB1 on resolved, {n} runs): tau pulled (mean reward) {arms};"
        f" regret against the best arm's mean, estimated: {regret}"
    )
