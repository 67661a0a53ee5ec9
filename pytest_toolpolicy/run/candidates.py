"""A candidate policy: the session's policy (the spec's, with ``RETRIEVE``/``SYMBOL_CAMEL`` as set)
with a few things changed, run as its own variant ``cand:<name>`` on the same items and judged
against ``current`` by the spec's decision rule, exactly as ``policy`` is. The file that names
them (``--toolpolicy-candidates``) is read by ``candidates_file.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..decide.variants import CANDIDATE_PREFIX as PREFIX
from ..decide.variants import candidate_of
from ..policy.confidence import ConfidenceTrigger
from ..policy.config import PolicyConfig
from ..policy.probe import LinearProbe
from .bandit import BanditSpec

__all__ = ["Candidate", "CandidateError", "candidate_line", "candidate_of"]


class CandidateError(ValueError):
    pass


@dataclass(frozen=True)
class Candidate:
    name: str
    description: str = ""
    gates_off: tuple[str, ...] = ()
    gates_on: tuple[str, ...] = ()
    prompt_order: tuple[str, ...] | None = None
    structured: str | None = None  # None: the session's setting
    ranking: str | None = None  # "hybrid": row 13's retrieval (None: the spec's keyword map)
    trigger: ConfidenceTrigger | None = None  # row 9's learned trigger (None: the spec's gate)
    probe: LinearProbe | None = None  # row 10's necessity probe (None: not used)
    # row 12's bandit: the trigger's tau picked run by run (``bandit.py``; None: not used)
    bandit: BanditSpec | None = None

    @property
    def variant(self) -> str:
        return f"{PREFIX}{self.name}"

    def config(self, base: PolicyConfig) -> PolicyConfig:
        """``base`` (the session's policy) with this candidate's changes."""
        gates = (base.gates - set(self.gates_off)) | set(self.gates_on)
        changed = replace(base, gates=frozenset(gates))
        if self.prompt_order is not None:
            changed = replace(changed, prompt_order=self.prompt_order)
        if self.ranking is not None:
            changed = replace(changed, ranking=self.ranking)
        if self.trigger is not None:
            changed = replace(changed, trigger=self.trigger)
        if self.probe is not None:
            changed = replace(changed, probe=self.probe)
        return changed

    def summary(self) -> str:
        """One line: what differs from the policy."""
        parts = []
        if self.gates_off:
            parts.append("off " + ", ".join(self.gates_off))
        if self.gates_on:
            parts.append("on " + ", ".join(self.gates_on))
        if self.prompt_order:
            parts.append("sections " + " > ".join(self.prompt_order))
        if self.structured:
            parts.append(f"structured {self.structured}")
        if self.ranking:
            parts.append(f"retrieval {self.ranking}")
        if self.trigger:
            t = self.trigger
            parts.append(f"trigger: call when {t.feature} {t.necessary_when} {t.tau:.3f}")
        if self.probe:
            parts.append(f"probe {self.probe.source or '(inline)'}")
        if self.bandit:
            b = self.bandit
            parts.append(f"bandit: call when {b.feature} {b.necessary_when} tau, tau of"
                         f" {', '.join(b.arms)} by UCB1")  # fmt: skip
        return "; ".join(parts) or "as the policy"


def candidate_line(candidate: Candidate, model: str, logprobs: int) -> str:
    """What the report's header says of a candidate: its description (else what it changes),
    and where the session cannot give a learned stage what it reads, that it judges nothing."""
    line = candidate.description or candidate.summary()
    if candidate.probe is not None and not model.startswith("local:"):
        line += f" — its probe judges nothing with {model}: only local: models expose hidden states"
    reads = candidate.trigger is not None or candidate.bandit is not None
    if reads and not logprobs:
        line += " — its trigger judges nothing: this session asks for no logprobs (--toolpolicy-logprobs)"
    elif reads and (model == "sim" or model.startswith("sim:")):
        line += " — its trigger reads SIMULATED logprobs (sim is a simulator, not a model)"
    return line
