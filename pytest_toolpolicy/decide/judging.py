"""One variant judged against its reference, what the verdict and statistics columns of the table
are computed from (``verdict_columns.py``, ``stats_columns.py``), each part derived once.

The verdict columns come only from the exact rules (:mod:`.decision`, :mod:`.ablation`); the
McNemar p and bootstrap intervals sit beside them for the reader and never change them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

import pandas as pd

from .ablation import Ablation, ablate, no_change_flags
from .decision import Decision, decide, no_decision_reason
from .measures import row_of
from .paired import Paired, paired
from .power import Power, power_of
from .sample import SHARED
from .variants import gate_of, reference_of

# How a variant is judged: not at all (current), not for want of its reference, not for want of
# a shared sample, by the decision rule (the policy, a candidate), by the ablation rule.
How = Literal["none", "missing", "unpaired", "decision", "ablation"]


@dataclass
class Judging:
    variant: str
    m: pd.DataFrame  # the measures (``measures.measures``), one row per variant
    results: pd.DataFrame  # every row of the session
    # The verdict and details given when the two rows do not share one sample.
    unpaired: tuple[str, str | None]

    @cached_property
    def reference(self) -> str | None:
        return reference_of(self.variant)

    @cached_property
    def how(self) -> How:
        ref = self.reference
        if ref is None:
            return "none"
        if ref not in self.m.index:
            return "missing"
        if (self.m.loc[[self.variant, ref], "sample"] != SHARED).any():
            # Measures of different instances (or of none): a delta would compare unlike samples
            # and the rules would only report unknowns, so the row says why instead.
            return "unpaired"
        return "decision" if ref == "current" else "ablation"

    @property
    def judged(self) -> bool:
        """Both rows measured on the shared sample: deltas, ratios and a rule apply."""
        return self.how in ("decision", "ablation")

    @cached_property
    def row(self) -> pd.Series:
        return row_of(self.m, self.variant)

    @cached_property
    def base(self) -> pd.Series:
        return row_of(self.m, str(self.reference))

    @cached_property
    def missing_reason(self) -> str:
        reason = no_decision_reason(list(self.m.index))
        return reason or f"no verdict: the {self.reference} arm was not run"

    # -- the decision rule: the policy, or a candidate, against current ----------------------

    @cached_property
    def decision(self) -> Decision:
        return decide(self.row, self.base)

    @property
    def beyond_policy(self) -> bool:
        """A candidate with the policy beside it: judged against the policy too."""
        return self.how == "decision" and self.variant != "policy" and "policy" in self.m.index

    @cached_property
    def policy(self) -> pd.Series:
        return row_of(self.m, "policy")

    @cached_property
    def versus_policy(self) -> Decision:
        return decide(self.row, self.policy)

    # -- the ablation rule: the policy with one gate off, against the policy -----------------

    @cached_property
    def gate(self) -> str:
        return gate_of(self.variant) or ""

    @cached_property
    def ablation(self) -> Ablation:
        return ablate(self.gate, self.row, self.base)

    @cached_property
    def no_change(self) -> dict[str, bool | None]:
        return no_change_flags(self.row, self.base)

    # -- the paired statistics beside the rules ------------------------------------------------

    @property
    def compared(self) -> bool:
        """The reference ran: the pairs and their statistics exist."""
        ref = self.reference
        return ref is not None and bool((self.results["variant"] == ref).any())

    @cached_property
    def paired(self) -> Paired:
        return paired(self.results, self.variant, str(self.reference))

    @cached_property
    def power(self) -> Power:
        # Power of the paired resolve comparison, from this sample (every trial a pair).
        p = self.paired
        return power_of(p.c, p.b, p.n_pairs)


def acted_beyond(acts: object, policy: object) -> str:
    """The gates that acted in a candidate's runs and never in the policy's ("gate N×, ..."):
    a candidate that turns a gate on shows whether it did anything."""
    try:
        mine, theirs = json.loads(str(acts)), json.loads(str(policy))
    except ValueError:
        return ""
    return ", ".join(f"{g} {n}\u00d7" for g, n in sorted(mine.items()) if n and not theirs.get(g))


def gate_count(counts: object, gate: str) -> int:
    try:
        return int(json.loads(str(counts)).get(gate, 0))
    except (ValueError, AttributeError):
        return 0
