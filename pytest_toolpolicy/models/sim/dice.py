"""Seeded decisions and the log the fault rates are measured from.

Every decision is a pure function of ``(seed, item, decision key)``, so a request asked twice gets
the same answer (the simulator keeps no state between requests) and a seed fixes a trajectory.
The log records each opportunity once, keyed by what it decides, however often it is re-derived.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from .profile import Profile

# Faults of one reply's shape: one uniform draw split into disjoint bands, so each class occurs
# at its own rate and none masks another.
REPLY_FAULTS = ("malformed_json", "unknown_tool", "bad_args", "multi_call")


@dataclass(frozen=True)
class Decision:
    arm: str
    item: str
    name: str  # a rate name of the profile, or "reply" for the reply-shape draw
    key: str
    fired: str | None  # the fault that occurred, or None


@dataclass
class DecisionLog:
    entries: dict[tuple[str, str, str, str], Decision] = field(default_factory=dict)

    def add(self, decision: Decision) -> None:
        self.entries.setdefault(
            (decision.arm, decision.item, decision.name, decision.key), decision
        )

    def rates(self) -> dict[str, tuple[int, int]]:
        """Fault class → (occurrences, opportunities)."""
        out: dict[str, tuple[int, int]] = {}
        for d in self.entries.values():
            names = REPLY_FAULTS if d.name == "reply" else (d.name,)
            for name in names:
                hits, chances = out.get(name, (0, 0))
                out[name] = (hits + (d.fired == name), chances + 1)
        return out


def uniform(seed: int, item: str, key: str) -> float:
    digest = hashlib.sha256(f"{seed}\x00{item}\x00{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


@dataclass
class Dice:
    seed: int
    profile: Profile
    log: DecisionLog
    arm: str
    item: str

    def roll(self, name: str, key: str) -> bool:
        rate = self.profile.rates()[name]
        fired = uniform(self.seed, self.item, f"{name}:{key}") < rate
        self.log.add(Decision(self.arm, self.item, name, key, name if fired else None))
        return fired

    def reply_fault(self, key: str) -> str | None:
        u = uniform(self.seed, self.item, f"reply:{key}")
        rates = self.profile.rates()
        edge, fired = 0.0, None
        for name in REPLY_FAULTS:
            edge += rates[name]
            if u < edge:
                fired = name
                break
        self.log.add(Decision(self.arm, self.item, "reply", key, fired))
        return fired
