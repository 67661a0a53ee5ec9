"""The names of variants and items: the arms, ``cand:<name>`` and ``policy-no:<gate>``, the
order the table lists them in, what each is judged against, and an item's id.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ARMS = ("current", "policy")
ABLATION_PREFIX = "policy-no:"
CANDIDATE_PREFIX = "cand:"
# Spec §9: the ablation rule is applied first to the two weakest a-priori cases.
FIRST_ABLATIONS = ("retrieve.embed", "trust.round_trip")


def ablation_variant(gate: str) -> str:
    return f"{ABLATION_PREFIX}{gate}"


def gate_of(variant: str) -> str | None:
    return variant[len(ABLATION_PREFIX) :] if variant.startswith(ABLATION_PREFIX) else None


def variant_order(variants: list[str] | set[str]) -> list[str]:
    """current, policy, the candidates by name, then the ablations: the spec's first two, then
    the rest by name."""
    present = set(variants)
    head = [v for v in ARMS if v in present]
    candidates = sorted(v for v in present if v.startswith(CANDIDATE_PREFIX))
    gates = sorted(g for v in present if (g := gate_of(v)) is not None)
    gates.sort(
        key=lambda g: FIRST_ABLATIONS.index(g) if g in FIRST_ABLATIONS else len(FIRST_ABLATIONS)
    )
    others = sorted(
        v
        for v in present
        if v not in ARMS and gate_of(v) is None and not v.startswith(CANDIDATE_PREFIX)
    )
    return head + candidates + [ablation_variant(g) for g in gates] + others


def reference_of(variant: str) -> str | None:
    """What a variant is judged against: the policy and each candidate against current (the
    decision rule), an ablation against the policy (the ablation rule)."""
    if variant == "policy" or variant.startswith(CANDIDATE_PREFIX):
        return "current"
    return "policy" if gate_of(variant) is not None else None


def candidate_of(variant: str) -> str | None:
    return variant[len(CANDIDATE_PREFIX) :] if variant.startswith(CANDIDATE_PREFIX) else None


def item_of(row: Any) -> str:
    """A row's item id (rows saved before the ``item`` column: instance and variant)."""
    item = row.get("item") if hasattr(row, "get") else None
    if isinstance(item, str) and item:
        return item
    return f"{row['instance_id']}-{row['variant']}"


def repo_of(instance_id: str) -> str:
    """An instance's repository by SWE-bench's id convention (``owner__name-number``; the
    bundled ones are ``bundled__project-N``), for rows whose trajectory does not name it."""
    owner, sep, rest = instance_id.partition("__")
    name = rest.rsplit("-", 1)[0] if "-" in rest else rest
    return f"{owner}/{name}" if sep else instance_id.rsplit("-", 1)[0]


@dataclass(frozen=True)
class ItemSpec:
    instance_id: str
    arm: str  # policy | current
    gate: str | None = None  # the gate an ablation variant turns off
    candidate: str | None = None  # the candidate policy a cand:<name> variant runs
    trial: int | None = None  # 1..K with --toolpolicy-trials K > 1; None: one trial

    @property
    def variant(self) -> str:
        if self.arm == "current":
            return "current"
        if self.gate:
            return f"policy-no:{self.gate}"
        return f"{CANDIDATE_PREFIX}{self.candidate}" if self.candidate else "policy"

    @property
    def id(self) -> str:
        return f"{self.instance_id}-{self.variant}" + (f"-t{self.trial}" if self.trial else "")
