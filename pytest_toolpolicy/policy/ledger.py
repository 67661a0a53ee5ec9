"""The observation ledger and the evidence ledger, as one immutable value.

``append`` returns a new ledger, so every stage stays a pure function of its inputs. Besides what
the tools and triggers returned, the ledger holds the harness's own records of a turn that ran
nothing: each rejected call (``validate.rejection_observation``) and each no-op turn
(``noop_observation``), so the next prompt shows the model why.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

from ..types import Observation


@dataclass(frozen=True)
class Ledger:
    entries: tuple[Observation, ...] = ()
    evidence: frozenset[str] = field(default_factory=frozenset)  # selectors a read/search cited
    fired: frozenset[str] = field(default_factory=frozenset)  # trigger condition keys

    def append(self, *observations: Observation) -> Ledger:
        cited = {s for o in observations if o.trust == "trusted" for s in o.cites}
        return replace(self, entries=self.entries + observations, evidence=self.evidence | cited)

    def mark_fired(self, key: str) -> Ledger:
        return replace(self, fired=self.fired | {key})

    @property
    def latest(self) -> Observation | None:
        return self.entries[-1] if self.entries else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "entries": [asdict(e) for e in self.entries],
            "evidence": sorted(self.evidence),
            "fired": sorted(self.fired),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Ledger:
        entries = tuple(
            Observation(**{**e, "cites": tuple(e.get("cites", ()))}) for e in data["entries"]
        )
        return cls(entries, frozenset(data["evidence"]), frozenset(data["fired"]))

    def collapsed(self, window: int = 20) -> list[str]:
        """The last ``window`` entries, one line each (spec §5)."""
        return [entry.line() for entry in self.entries[-window:]]


NOOP_TARGET = "reply"


def noop_observation(reason: str) -> Observation:
    """A no-op turn as the ledger records it (spec §5: "logged"): the line ``noop, reply,
    <reason>`` with the parser's reason; ``data`` is the no-op as ``toolpolicy call`` prints it."""
    return Observation(
        kind="noop",
        target=NOOP_TARGET,
        result=reason,
        data={"noop": True, "reason": reason},
        source="harness",
    )
