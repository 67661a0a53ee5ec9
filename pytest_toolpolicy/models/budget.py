"""A per-item budget: a cost cap and a turn cap that a loop charges each completion to.

Immutable: ``budget = budget.charge(completion)``. The loop stops with ``budget_exhausted`` once
``exhausted`` is true, i.e. once a cap is reached or passed (the call that crosses it has been
paid for already). A completion of unknown cost adds nothing to ``known_usd`` and is counted in
``unpriced``: ``known_usd`` is then a lower bound, and the dollar cap can no longer be trusted
to bind (``usd_cap_enforceable`` is false), which ``reason`` and ``record`` say outright.

A cost that is no amount of dollars (NaN, infinite, negative, or one that would carry the sum
past any finite number) is charged as unknown, with a warning: ``known_usd`` stays a finite
lower bound, never ``$inf``.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, replace
from typing import Any

from .base import Completion

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Budget:
    max_usd: float | None = None
    max_turns: int | None = None
    known_usd: float = 0.0  # the sum of every known cost charged
    turns: int = 0  # completions charged
    unpriced: int = 0  # completions whose cost was unknown

    def __post_init__(self) -> None:
        if self.max_usd is not None and self.max_usd < 0:
            raise ValueError(f"max_usd must be >= 0, not {self.max_usd}")
        if self.max_turns is not None and self.max_turns < 1:
            raise ValueError(f"max_turns must be >= 1, not {self.max_turns}")

    def charge(self, completion: Completion) -> Budget:
        cost = completion.cost_usd
        if cost is not None and not (cost >= 0 and math.isfinite(self.known_usd + cost)):
            log.warning(
                "%s: cost %r is no amount of dollars; charged as unknown", completion.model, cost
            )
            cost = None
        return replace(
            self,
            known_usd=self.known_usd + (cost or 0.0),
            turns=self.turns + 1,
            unpriced=self.unpriced + (cost is None),
        )

    @property
    def spent_usd(self) -> float | None:
        """What was spent, or None when any completion's cost was unknown."""
        return None if self.unpriced else self.known_usd

    @property
    def usd_cap_enforceable(self) -> bool:
        return self.max_usd is None or self.unpriced == 0

    @property
    def exhausted(self) -> bool:
        return self.reason is not None

    @property
    def reason(self) -> str | None:
        """Why the budget is exhausted, or None while it is not."""
        if self.max_usd is not None and self.known_usd >= self.max_usd:
            unknown = f" plus {self.unpriced} of unknown cost" if self.unpriced else ""
            return f"cost cap ${self.max_usd:g} reached: ${self.known_usd:.6g} spent{unknown}"
        if self.max_turns is not None and self.turns >= self.max_turns:
            return f"turn cap {self.max_turns} reached"
        return None

    def record(self) -> dict[str, Any]:
        return {
            "max_usd": self.max_usd,
            "max_turns": self.max_turns,
            "spent_usd": self.spent_usd,
            "known_usd": self.known_usd,
            "turns": self.turns,
            "unpriced": self.unpriced,
            "usd_cap_enforceable": self.usd_cap_enforceable,
            "exhausted": self.exhausted,
            "reason": self.reason,
        }
