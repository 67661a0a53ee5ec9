"""How much a paired resolve comparison could have seen: power beside the verdict.

The verdict's resolve criterion compares two arms on the same instances, so the relevant design
is a paired binary one (McNemar's). Its power depends on the share of discordant pairs ``psi``
(one arm resolves, the other does not) and their imbalance ``delta`` (the resolve difference).
With the normal approximation of Connor (1987), "Sample size for testing differences in
proportions for the paired-sample design", Biometrics 43(1):207-211, the pairs needed are

    n = (z_{1-a/2} * sqrt(psi) + z_{1-b} * sqrt(psi - delta^2))^2 / delta^2

Two figures follow from the observed sample: the smallest difference its size could detect
(``psi`` as observed, ``n`` as run), and the pairs the observed difference would need. Both are
read as what they are: planning figures from one sample's discordance, not a second test.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

ALPHA = 0.05
POWER = 0.8


@dataclass(frozen=True)
class Power:
    n_pairs: int
    discordance: float  # psi: the share of pairs where exactly one arm resolved
    observed_delta: float  # the resolve difference (candidate minus reference)
    detectable_delta: float  # the smallest |difference| this n detects at ALPHA with POWER
    pairs_needed: float  # pairs the observed difference needs at ALPHA with POWER (inf: none)
    note: str | None = None  # why a figure could not be computed

    def line(self) -> str:
        if self.note:
            return f"power: {self.note}"
        needed = "never" if math.isinf(self.pairs_needed) else f"{math.ceil(self.pairs_needed)}"
        return (
            f"power: {self.n_pairs} pairs detect a resolve difference of"
            f" ±{self.detectable_delta:.3f} (α={ALPHA}, power {POWER:.0%});"
            f" the observed {self.observed_delta:+.3f} needs {needed} pairs"
        )


def _z(p: float) -> float:
    return NormalDist().inv_cdf(p)


def pairs_needed(psi: float, delta: float, alpha: float = ALPHA, power: float = POWER) -> float:
    """Connor's n for a discordance ``psi`` and difference ``delta`` (inf when ``delta`` is 0)."""
    delta = abs(delta)
    if delta == 0:
        return math.inf
    if not 0 < delta <= psi <= 1:
        raise ValueError(f"need 0 < |delta| <= psi <= 1, got delta={delta}, psi={psi}")
    za, zb = _z(1 - alpha / 2), _z(power)
    return (za * math.sqrt(psi) + zb * math.sqrt(psi - delta**2)) ** 2 / delta**2


def detectable_delta(n: int, psi: float, alpha: float = ALPHA, power: float = POWER) -> float:
    """The smallest ``delta`` (at most ``psi``: a difference cannot exceed the discordance)
    that ``n`` pairs detect; ``pairs_needed`` falls as ``delta`` grows, so bisection finds it.
    NaN when even ``delta = psi`` needs more than ``n`` pairs."""
    if n <= 0 or psi <= 0:
        return math.nan
    if pairs_needed(psi, psi, alpha, power) > n:
        return math.nan
    low, high = 0.0, psi
    for _ in range(60):
        mid = (low + high) / 2
        if mid == 0 or pairs_needed(psi, mid, alpha, power) > n:
            low = mid
        else:
            high = mid
    return high


def power_of(b: int, c: int, n: int) -> Power:
    """From a paired sample: ``b`` pairs only the candidate resolved, ``c`` only the
    reference, of ``n`` pairs."""
    if n <= 0:
        return Power(0, math.nan, math.nan, math.nan, math.nan, "no paired instances")
    psi, delta = (b + c) / n, (b - c) / n
    if psi == 0:
        none = (
            f"no discordant pair in {n}: both arms resolved the same instances, so the sample"
            " says nothing about the size of a difference"
        )
        return Power(n, 0.0, 0.0, math.nan, math.inf, none)
    found = detectable_delta(n, psi)
    needed = pairs_needed(psi, delta)
    note: str | None = None
    if math.isnan(found):
        note = (
            f"{n} pairs with discordance {psi:.3f} cannot reach {POWER:.0%} power for any"
            f" difference; the observed {delta:+.3f} needs"
            f" {'never' if math.isinf(needed) else math.ceil(needed)} pairs"
        )
    return Power(n, psi, delta, found, needed, note)
