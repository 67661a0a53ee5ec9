"""Row 12 live: a candidate whose confidence-trigger τ a bandit tunes online, from terminal
reward, run after run (each instance × trial of ``--toolpolicy-trials`` is one run).

Its arms are "withhold nothing" (the spec's gate) and the candidate's thresholds. Before a run,
UCB1 picks an arm from the runs begun so far; after it, the run's reward — resolved, 1 or 0,
the only reward a run itself shows — is paid to that arm. Runs of one session that are in
flight at once (``-n``) count as pulls of their arm before they are paid, so parallel runs
spread over the arms instead of all taking the same one.

The state is a SQLite file beside the execution memo, shared by every worker that shares that
disk (workers on another machine each keep their own). A run that runs again (a resumed or a
replayed session) keeps the arm it was first given, so a recording replays the same runs. The
arm is in the run's row (``bandit_arm``, ``bandit_seq``); ``decide/bandit_curve.py`` reads the
curve off the rows: how often each arm was pulled, what it earned, and the regret against the
best arm's mean — estimated, since an arm not pulled on a run has no reward there.
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..policy.confidence import ConfidenceTrigger
from ..sqlite_shared import open_shared

NOTHING = "none"  # the arm that withholds nothing: the spec's gate


@dataclass(frozen=True)
class BanditSpec:
    feature: str
    taus: tuple[float, ...]
    necessary_when: str = "below"

    def __post_init__(self) -> None:
        if not self.taus:
            raise ValueError("a bandit needs at least one tau")
        ConfidenceTrigger(self.feature, self.taus[0], self.necessary_when)  # checks the rest

    @property
    def arms(self) -> tuple[str, ...]:
        return (NOTHING, *(f"{tau:g}" for tau in self.taus))

    def trigger(self, arm: int) -> ConfidenceTrigger | None:
        if arm == 0:
            return None
        return ConfidenceTrigger(self.feature, self.taus[arm - 1], self.necessary_when)

    def key(self) -> str:
        """What a run's pulls are filed under: a changed bandit starts afresh."""
        return f"{self.feature}:{self.necessary_when}:" + ",".join(f"{t!r}" for t in self.taus)


def ucb1(pulls: Sequence[int], paid: Sequence[int], totals: Sequence[float]) -> int:
    """The arm to pull: one never pulled first (lowest index), else the highest mean plus
    ``sqrt(2 ln n / pulls)``. ``pulls`` counts runs begun, ``paid`` those whose reward is in
    ``totals``; an arm with pulls but none paid yet is as good as it can be (mean 1)."""
    for arm, count in enumerate(pulls):
        if count == 0:
            return arm
    n = sum(pulls)
    scores = [
        (totals[a] / paid[a] if paid[a] else 1.0) + math.sqrt(2 * math.log(n) / pulls[a])
        for a in range(len(pulls))
    ]
    return max(range(len(scores)), key=lambda a: (scores[a], -a))


class BanditStore:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._conn = open_shared(path, _setup, isolation_level=None, check_same_thread=False)

    def pick(self, candidate: str, spec: BanditSpec, item: str) -> tuple[int, int]:
        """The arm for ``item``'s run and its place in the order runs began (1, 2, ...)."""
        key = (candidate, spec.key())
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")  # one picker at a time across processes
            try:
                row = self._conn.execute(
                    "SELECT arm, seq FROM pulls WHERE candidate=? AND spec=? AND item=?",
                    (*key, item),
                ).fetchone()
                if row is not None:
                    self._conn.execute("COMMIT")
                    return int(row[0]), int(row[1])
                n = len(spec.arms)
                pulls, paid, totals = [0] * n, [0] * n, [0.0] * n
                for arm, reward in self._conn.execute(
                    "SELECT arm, reward FROM pulls WHERE candidate=? AND spec=?", key
                ):
                    if 0 <= arm < n:
                        pulls[arm] += 1
                        if reward is not None:
                            paid[arm] += 1
                            totals[arm] += float(reward)
                arm = ucb1(pulls, paid, totals)
                seq = sum(pulls) + 1
                self._conn.execute(
                    "INSERT INTO pulls (candidate, spec, item, arm, seq) VALUES (?, ?, ?, ?, ?)",
                    (*key, item, arm, seq),
                )
                self._conn.execute("COMMIT")
                return arm, seq
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def pay(self, candidate: str, spec: BanditSpec, item: str, reward: float | None) -> None:
        """The run's reward (None: it measured nothing, so its arm learns nothing from it and
        the pull is taken back)."""
        with self._lock:
            if reward is None:
                self._conn.execute(
                    "DELETE FROM pulls WHERE candidate=? AND spec=? AND item=? AND reward IS NULL",
                    (candidate, spec.key(), item),
                )
            else:
                self._conn.execute(
                    "UPDATE pulls SET reward=? WHERE candidate=? AND spec=? AND item=?",
                    (float(reward), candidate, spec.key(), item),
                )

    def close(self) -> None:
        self._conn.close()


def _setup(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(
        "CREATE TABLE IF NOT EXISTS pulls (candidate TEXT, spec TEXT, item TEXT, arm INTEGER,"
        " seq INTEGER, reward REAL, PRIMARY KEY (candidate, spec, item))"
    )
