"""How well the derived labels (``gold_derive``) agree with the hand-written ones, per decision
point and whole label: the figure ``gold_labels/FORMAT.md`` states.

    python -m pytest_toolpolicy.bench.gold_agreement   # over the bundled instances
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .gold import GOLD_DIR, load_gold
from .gold_derive import derive
from .instance import Instance


@dataclass(frozen=True)
class Agreement:
    instances: int
    points_equal: tuple[int, ...]  # per decision point: derived set == hand set
    points_within: tuple[int, ...]  # per point: every move derived accepts, hand accepts too
    outcomes_equal: int
    whole_equal: int  # all three points and the outcome equal
    differing: tuple[str, ...]  # "<instance> point <i>: hand [...] derived [...]"

    def lines(self) -> list[str]:
        n = self.instances
        points = sum(self.points_equal)
        within = sum(self.points_within)
        per = ", ".join(f"{i + 1}: {k}/{n}" for i, k in enumerate(self.points_equal))
        return [
            f"instances: {n}",
            f"decision points equal: {points}/{3 * n} ({_pct(points, 3 * n)}); per point {per}",
            f"decision points where every derived move is a hand-accepted one: {within}/{3 * n}"
            f" ({_pct(within, 3 * n)})",
            f"outcomes equal: {self.outcomes_equal}/{n}",
            f"whole labels equal: {self.whole_equal}/{n} ({_pct(self.whole_equal, n)})",
            *self.differing,
        ]


def _pct(k: int, n: int) -> str:
    return f"{100 * k / n:.1f}%" if n else "n/a"


def agreement(instances: Iterable[Instance], directory: Path = GOLD_DIR) -> Agreement:
    """Derived vs hand-written labels of ``instances`` (each must have a hand-written one)."""
    equal, within = [0, 0, 0], [0, 0, 0]
    outcomes = whole = n = 0
    differing: list[str] = []
    for instance in instances:
        hand = load_gold(instance.instance_id, directory)
        derived = derive(
            instance.instance_id,
            instance.problem_statement,
            instance.patch,
            instance.underspecified,
        ).label
        n += 1
        if derived is None:
            differing.append(f"{instance.instance_id}: no derived label")
            continue
        same = True
        for i, (h, d) in enumerate(zip(hand.decisions, derived.decisions, strict=False)):
            equal[i] += h == d
            within[i] += d <= h
            if h != d:
                same = False
                differing.append(
                    f"{instance.instance_id} point {i + 1}: hand {sorted(h)} derived {sorted(d)}"
                )
        outcomes += hand.outcome == derived.outcome
        whole += same and hand.outcome == derived.outcome
    return Agreement(n, tuple(equal), tuple(within), outcomes, whole, tuple(differing))


def main() -> int:
    from .load import load_instances

    result = load_instances("bundled")
    print("\n".join(agreement(result.instances).lines()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
