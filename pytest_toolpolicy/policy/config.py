"""One frozen config whose gates are named switches; an ablation variant is ``without(gate)``.

The spec's flags are read here and nowhere else: ``SYMBOL_CAMEL=1`` (bare CamelCase tokens fire
the symbol trigger), ``RETRIEVE=embed`` (the embedding retrieval fallback), ``TOOL_POLICY``
(``policy`` | ``current``: which arm runs by default).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from ..shown import SPEC_ORDER, check_order
from ..types import MAX_TURNS
from .confidence import ConfidenceTrigger
from .probe import LinearProbe

GATES: tuple[str, ...] = (
    "trigger.lint",
    "trigger.test",
    "trigger.symbol",
    "validate.registry",
    "validate.args",
    "validate.evidence",
    "noop.affordances",
    "serialize",
    "retrieve.top5",
    "retrieve.embed",
    "trust.exit_code",
    "trust.schema",
    "trust.round_trip",
    "trust.lint",
)
# Spec §4.2: the embedding fallback is specified but off by default.
DEFAULT_GATES = frozenset(GATES) - {"retrieve.embed"}
ARMS = ("policy", "current")
RANKINGS = ("map", "hybrid")


@dataclass(frozen=True)
class PolicyConfig:
    gates: frozenset[str] = field(default=DEFAULT_GATES)
    symbol_camel: bool = False
    symbol_k: int = 3  # spec §3.1: the first k (≤ 3) unique matches
    ledger_window: int = 20  # spec §5: the last 20 ledger entries
    max_turns: int = MAX_TURNS
    max_noop_turns: int = 5  # consecutive no-op turns before the run is out of budget
    max_cost_usd: float | None = None
    # The user message's sections (spec §5: tools, state, issue). Another order is a candidate
    # policy of its own (e.g. the issue first: a prompt prefix that stays the same turn to turn).
    prompt_order: tuple[str, ...] = SPEC_ORDER
    # How the candidate tools are ranked: "map" (spec §4.2's keyword map), or "hybrid" (row 13,
    # a candidate: keyword hits first by count, ties and the rest by embedding cosine).
    ranking: str = "map"
    # Row 9, a candidate: a learned trigger that withholds model-requested calls it judges not
    # necessary from the reply's logprobs (None: the spec's deterministic gate alone).
    trigger: ConfidenceTrigger | None = None
    # Row 10, a candidate: a linear probe on the prompt's hidden state that withholds calls it
    # judges not necessary before the reply (None: not used).
    probe: LinearProbe | None = None

    def __post_init__(self) -> None:
        unknown = set(self.gates) - set(GATES)
        if unknown:
            raise ValueError(
                f"unknown gate(s): {', '.join(sorted(unknown))}; gates: {', '.join(GATES)}"
            )
        if not 1 <= self.symbol_k <= 3:
            raise ValueError(f"symbol_k must be 1..3, got {self.symbol_k}")
        check_order(self.prompt_order)
        if self.ranking not in RANKINGS:
            raise ValueError(f"ranking must be one of {', '.join(RANKINGS)}, got {self.ranking!r}")

    def on(self, gate: str) -> bool:
        if gate not in GATES:
            raise ValueError(f"unknown gate: {gate}")
        return gate in self.gates

    def without(self, gate: str) -> PolicyConfig:
        """The ablation variant with ``gate`` removed and everything else held fixed."""
        if gate not in GATES:
            raise ValueError(f"unknown gate: {gate}; gates: {', '.join(GATES)}")
        return replace(self, gates=self.gates - {gate})

    def with_gate(self, gate: str) -> PolicyConfig:
        if gate not in GATES:
            raise ValueError(f"unknown gate: {gate}; gates: {', '.join(GATES)}")
        return replace(self, gates=self.gates | {gate})

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, **overrides: object
    ) -> PolicyConfig:
        env = os.environ if environ is None else environ
        config = cls(symbol_camel=env.get("SYMBOL_CAMEL", "") == "1", **overrides)  # type: ignore[arg-type]
        retrieve = env.get("RETRIEVE", "")
        if retrieve not in ("", "map", "embed"):
            raise ValueError(f"RETRIEVE must be 'embed' or unset, got {retrieve!r}")
        return config.with_gate("retrieve.embed") if retrieve == "embed" else config


def default_arm(environ: Mapping[str, str] | None = None) -> str:
    """``TOOL_POLICY`` (spec §10): ``policy`` | ``current``, default ``current``."""
    env = os.environ if environ is None else environ
    arm = env.get("TOOL_POLICY", "") or "current"
    if arm not in ARMS:
        raise ValueError(f"TOOL_POLICY must be policy or current, got {arm!r}")
    return arm
