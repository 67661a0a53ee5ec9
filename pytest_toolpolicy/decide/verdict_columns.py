"""The decision table's verdict columns: each variant against its reference by spec §9's exact
rules — the policy and each candidate against current (the decision rule), each ablation
against the policy (the ablation rule) — with the deltas and flags the verdict rests on.

Each column is computed from the variant judged against its reference (``Judging``); a column
that does not apply to a variant (current has no reference; an ablation no ``pass_*``) is left
empty (``MISSING``).
"""

from __future__ import annotations

from .bandit_curve import line_of
from .exact import MEASURES
from .judging import Judging, acted_beyond, gate_count
from .table_column import MISSING, TableColumn

Judged = TableColumn[Judging]


def _verdict(j: Judging) -> object:
    if j.how == "none":
        return MISSING
    if j.how == "missing":
        return j.missing_reason
    if j.how == "unpaired":
        return j.unpaired[0]
    return j.decision.verdict if j.how == "decision" else j.ablation.verdict


def _details(j: Judging) -> object:
    if j.how in ("none", "missing"):
        return MISSING
    if j.how == "unpaired":
        return j.unpaired[1]
    if j.how == "ablation":
        return j.ablation.detail or "no change"
    details = "; ".join(c.detail for c in j.decision.criteria.values())
    if j.decision.undecided:  # the criteria as measured: each endpoint error not resolved
        details = f"as measured (endpoint errors not resolved): {details}"
    return details


def _skipped(j: Judging) -> tuple[list[str], str]:
    """The measures the rule did not judge, and why."""
    if j.how == "decision":
        return [c.name for c in j.decision.not_judged], j.decision.judged_note
    return list(j.ablation.not_judged), j.ablation.judged_note


def _delta(name: str) -> Judged:
    return Judged(
        f"d_{name}",
        f"{name} minus the reference's",
        lambda j: j.row[name] - j.base[name] if j.judged else MISSING,
    )


def _ratio(name: str) -> Judged:
    def compute(j: Judging) -> object:
        if not j.judged:
            return MISSING
        return j.row[name] / j.base[name] if j.base[name] else float("nan")

    return Judged(f"{name}_ratio", f"{name} over the reference's", compute)


def _passed(name: str) -> Judged:
    def compute(j: Judging) -> object:
        if j.how != "decision":
            return MISSING
        c = j.decision.criteria[name]
        return c.passed if c.judged else None

    return Judged(
        f"pass_{name}",
        f"the decision rule's {name} criterion: True, False, or empty where not judged",
        compute,
    )


def _same(name: str) -> Judged:
    return Judged(
        f"same_{name}",
        f"the ablation rule: {name} unchanged with the gate off (empty: not judged)",
        lambda j: j.no_change[name] if j.how == "ablation" else MISSING,
    )


def _acts(name: str, counts: str) -> Judged:
    # How often the gate acted where it was on (the full policy, same sample): a gate that
    # never acted cannot change a measure, so its "no change" shows nothing.
    return Judged(
        name,
        f"an ablation: times its gate {'acted' if counts == 'acts' else 'could not act'} in the"
        " policy's runs",
        lambda j: gate_count(j.base[counts], j.gate) if j.how == "ablation" else MISSING,
    )


VERDICT_COLUMNS: tuple[Judged, ...] = (
    Judged(
        "reference", "what the variant is judged against (empty: current)", lambda j: j.reference
    ),
    Judged("verdict", "the rule's verdict, or why there is none", _verdict),
    Judged("details", "each criterion as judged, or why no verdict", _details),
    Judged(
        "judged",
        "how many of the five measures the rule judged",
        lambda j: len(MEASURES) - len(_skipped(j)[0]) if j.judged else MISSING,
    ),
    Judged(
        "not_judged",
        "why the others were not",
        lambda j: (_skipped(j)[1] or None) if j.judged else MISSING,
    ),
    *(_delta(name) for name in MEASURES),
    *(_ratio(name) for name in ("cost", "tokens")),
    *(_passed(name) for name in MEASURES),
    *(_same(name) for name in MEASURES),
    _acts("gate_acts", "acts"),
    _acts("gate_blocked", "blocked"),
    Judged(
        "acted_beyond",
        "a candidate: the gates that acted in its runs and never in the policy's",
        lambda j: acted_beyond(j.row["acts"], j.policy["acts"]) if j.beyond_policy else MISSING,
    ),
    # The same rule with the spec's policy as the one to beat: a later round replaces the
    # deterministic stage only if it beats it too.
    Judged(
        "verdict_vs_policy",
        "a candidate: the decision rule's verdict against the policy",
        lambda j: j.versus_policy.verdict if j.beyond_policy else MISSING,
    ),
    Judged(
        "bandit",
        "a bandit candidate's pulls, mean rewards and regret, in one line",
        lambda j: line_of(j.results[j.results["variant"] == j.variant]) or None,
    ),
)
