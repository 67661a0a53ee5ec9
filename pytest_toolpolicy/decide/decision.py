"""Spec §9's decision rule, candidate ("policy") vs current, evaluated exactly.

Every measure is compared as a ``Fraction`` (counts for ratios, ``Fraction(repr(x))`` for $), so
a cost of exactly 1.5× passes and a precision drop of 0.031 fails, as written. An unknown measure
(an unpriced model, an arm that made no calls) cannot satisfy its criterion: the rule demands the
candidate be shown no worse, and NaN shows nothing.

One exception, stated wherever the verdict is: a criterion whose measure the harness cannot
observe at all on these instances, for a reason it names (:func:`.exact.unobservable`: no gold
label for any of them; an external agent's calls that are hidden, or that cannot be rerun), is
*not judged*. It neither passes nor blocks, and the verdict says how
many criteria were judged and why the others were not. Only the measures in
``exact.MAY_GO_UNOBSERVED`` can be: resolve, cost and tokens are always observable, so their
unknowns still fail.

An item the endpoint ended (``model_error``) is measured as not resolved, so no arm leaves the
sample by failing there; but then the endpoint, not the arm, may have decided the verdict. So
the rule is applied twice more, with each such item counted resolved for the candidate (its
best case) and for current (its worst); where the two verdicts differ there is none: "no
verdict: endpoint errors on N instances ... could change it" (:func:`endpoint_doubt`). Only
resolve moves between the cases: the items' spend is what they spent either way.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from numbers import Integral

import pandas as pd

from .exact import exact, unobservable
from .fmt import MINUS, limit, number, plural, signed

SPEND_LIMIT = Fraction(3, 2)  # cost and tokens: candidate ≤ 1.5 × current
REGRESSION = Fraction(3, 100)  # precision and selection: candidate ≥ current − 0.03
CRITERIA = ("resolve", "cost", "tokens", "call_precision", "selection_accuracy")
PASSED, FAILED, NOT_JUDGED = "passed", "failed", "not judged"


@dataclass(frozen=True)
class Criterion:
    name: str
    state: str  # passed | failed | not judged
    detail: str

    @property
    def passed(self) -> bool:
        return self.state == PASSED

    @property
    def judged(self) -> bool:
        return self.state != NOT_JUDGED


def _criterion(name: str, passed: bool, detail: str) -> Criterion:
    return Criterion(name, PASSED if passed else FAILED, detail)


@dataclass(frozen=True)
class Decision:
    adopt: bool
    criteria: dict[str, Criterion]  # as measured
    # Why there is no verdict though the rule applies: endpoint errors could change it.
    undecided: str | None = None

    @property
    def not_judged(self) -> list[Criterion]:
        return [c for c in self.criteria.values() if not c.judged]

    @property
    def judged_note(self) -> str:
        """E.g. "4 of 5 criteria judged; selection_accuracy not judged: ..."; "" when all were."""
        skipped = self.not_judged
        if not skipped:
            return ""
        judged = len(self.criteria) - len(skipped)
        reasons = "; ".join(c.detail for c in skipped)
        return f"{judged} of {len(self.criteria)} criteria judged; {reasons}"

    @property
    def verdict(self) -> str:
        if self.undecided:
            return self.undecided
        note = f" ({self.judged_note})" if self.judged_note else ""
        if self.adopt:
            return "ADOPT" + note
        failed = ", ".join(c.detail for c in self.criteria.values() if c.state == FAILED)
        return f"NOT ADOPTED \u2014 failed: {failed}{note}"


def _unknown(name: str, cand: Fraction | None, why: str, needs: str) -> Criterion:
    side = "the candidate" if cand is None else "current"
    return _criterion(name, False, f"{name} unknown for {side} ({why}) \u2014 cannot show {needs}")


def _not_judged(name: str, candidate: pd.Series, current: pd.Series) -> Criterion | None:
    """The criterion as not judged, when either side cannot observe its measure at all."""
    sides = (("the candidate", candidate), ("current", current))
    found = {side: why for side, row in sides if (why := unobservable(row, name))}
    if not found:
        return None
    if len(found) == 2 and len(set(found.values())) == 1:
        shown = next(iter(found.values()))  # the same reason on both sides, said once
    else:
        shown = "; ".join(f"{why} ({side})" for side, why in found.items())
    return Criterion(name, NOT_JUDGED, f"{name} not judged: {shown}")


def _resolve(cand: Fraction | None, cur: Fraction | None, why: str | None = None) -> Criterion:
    if cand is None or cur is None:
        return _unknown("resolve", cand, why or "no items ran", "a strict gain")
    a, b = number(cand), number(cur)
    if cand == cur:
        return _criterion("resolve", False, f"resolve (tie {a} = {b})")
    if cand < cur:
        return _criterion("resolve", False, f"resolve {a} < {b} ({signed(cand - cur)})")
    return _criterion("resolve", True, f"resolve {a} vs {b} ({signed(cand - cur)})")


def _spend(name: str, cand: Fraction | None, cur: Fraction | None, why: str) -> Criterion:
    needs = f"\u2264 {limit(SPEND_LIMIT)}\u00d7"
    if cand is None or cur is None:
        return _unknown(name, cand, why, needs)
    passed = cand <= SPEND_LIMIT * cur
    if cur == 0:
        # No ratio exists against a free current arm; only an equally free candidate passes.
        shown = f"{name} {number(cand, 4)} vs 0"
        return _criterion(name, passed, f"{shown} ({needs})" if passed else f"{shown} > 0")
    ratio = number(cand / cur, 2, SPEND_LIMIT) + "\u00d7"
    if passed:
        return _criterion(name, True, f"{name} {ratio} ({needs})")
    return _criterion(name, False, f"{name} {ratio} > {limit(SPEND_LIMIT)}\u00d7")


def _no_regression(name: str, cand: Fraction | None, cur: Fraction | None, why: str) -> Criterion:
    needs = f"\u2265 current {MINUS} {limit(REGRESSION)}"
    if cand is None or cur is None:
        return _unknown(name, cand, why, needs)
    delta = cand - cur
    passed = delta >= -REGRESSION
    shown = f"{name} {number(cand, 3)} vs {number(cur, 3)}"
    op = "\u2265" if passed else "<"
    return _criterion(
        name, passed, f"{shown} ({signed(delta, 3, -REGRESSION)} {op} {MINUS}{limit(REGRESSION)})"
    )


def decide(candidate: pd.Series, current: pd.Series) -> Decision:
    """Apply the rule to two rows of :func:`~pytest_toolpolicy.decide.measures.measures`; no
    verdict where the endpoint's errors could change it (:func:`endpoint_doubt`)."""
    decision = _decide(candidate, current)
    doubt = endpoint_doubt(candidate, current)
    return replace(decision, adopt=False, undecided=doubt) if doubt else decision


def endpoint_doubt(candidate: pd.Series, current: pd.Series) -> str | None:
    """Why the endpoint's errors could change the verdict (it differs with every such item
    counted resolved for the candidate, and with every one counted resolved for current), or
    None. The rows name their variants (``Series.name``) where they come from a table."""
    mine, theirs = _model_errors(candidate), _model_errors(current)
    if not mine and not theirs:
        return None
    best = _decide(_counted_resolved(candidate, mine), current)
    worst = _decide(candidate, _counted_resolved(current, theirs))
    if best.adopt == worst.adopt:
        return None
    name = str(candidate.name) if isinstance(candidate.name, str) else "the candidate"
    ref = str(current.name) if isinstance(current.name, str) else "current"
    return (
        f"no verdict: endpoint errors on {plural(mine + theirs, 'instance')} ({ref} {theirs},"
        f" {name} {mine}) could change it: counted resolved in {name}, {best.verdict};"
        f" in {ref}, {worst.verdict}"
    )


def _model_errors(row: pd.Series) -> int:
    """The row's items the endpoint ended (0 for a row from before they were measured)."""
    value = row.get("model_errors")
    return 0 if value is None or pd.isna(value) else int(value)


def _counted_resolved(row: pd.Series, k: int) -> pd.Series:
    """``row`` with ``k`` more of its items resolved."""
    out = row.copy()
    out["resolved"] = int(row["resolved"]) + k
    if int(row["n"]):
        out["resolve"] = out["resolved"] / int(row["n"])
    return out


def _decide(candidate: pd.Series, current: pd.Series) -> Decision:
    def pair(measure: str) -> tuple[Fraction | None, Fraction | None]:
        return exact(candidate, measure), exact(current, measure)

    # A side with no measured item has every measure unknown: say that, not the reason an
    # unknown would have on a side that ran (an unpriced model, no tool calls).
    empty = [
        s for s, row in (("the candidate", candidate), ("current", current)) if not row.get("n")
    ]
    nothing = f"no measured item in {' or '.join(empty)}" if empty else None
    # The cost reason is that of the side _unknown names: the candidate's if its cost is unknown.
    costly = candidate if exact(candidate, "cost") is None else current
    judged = [
        _resolve(*pair("resolve"), nothing),
        _spend("cost", *pair("cost"), nothing or _cost_unknown(costly)),
        _spend("tokens", *pair("tokens"), nothing or "no items ran"),
        _no_regression("call_precision", *pair("call_precision"), nothing or "no tool calls"),
        _no_regression(
            "selection_accuracy", *pair("selection_accuracy"), nothing or "no scored selections"
        ),
    ]
    # A side with nothing measured has nothing to observe either: its unknowns fail, as above.
    criteria = [c if nothing else _not_judged(c.name, candidate, current) or c for c in judged]
    adopt = all(c.passed for c in criteria if c.judged)
    return Decision(adopt, {c.name: c for c in criteria})


def _cost_unknown(row: pd.Series) -> str:
    """Why a measured side's $/instance is unknown, as far as its counts tell."""
    unknown, n, model = row.get("cost_unknown"), row.get("n"), row.get("model")
    if not isinstance(unknown, Integral) or not unknown:
        return "unpriced model spend: $/instance is NaN"  # a row without the counts
    items = f"no cost for {unknown} of {n} items"
    if isinstance(model, str) and model.startswith("local:"):
        # A local model is priced at $0, so "unpriced" would send the reader to a price file
        # that cannot help: only an uncounted call leaves its cost unknown.
        return f"{items}, though {model} is priced local at $0: a call failed or reported no usage"
    return f"{items}: an unpriced model, or a call that failed or reported no usage"


def no_decision_reason(variants: set[str] | list[str]) -> str | None:
    """Why the rule cannot be applied to these variants, or None when it can."""
    missing = [arm for arm in ("current", "policy") if arm not in set(variants)]
    if not missing:
        return None
    if len(missing) == 2:
        return "no decision: neither the current nor the policy arm was run"
    return f"no decision: the {missing[0]} arm was not run"
