import math

import pytest

from pytest_toolpolicy.decide.decision import decide, no_decision_reason

from .measure_rows import mrow

CURRENT = mrow(resolved=11)


def test_a_strictly_better_cheaper_candidate_is_adopted() -> None:
    d = decide(mrow(resolved=15, cost=0.1), CURRENT)
    assert d.adopt and d.verdict == "ADOPT"
    assert d.criteria["resolve"].detail == "resolve 0.75 vs 0.55 (+0.20)"
    assert d.criteria["cost"].detail == "cost 0.50× (≤ 1.5×)"
    assert list(d.criteria) == ["resolve", "cost", "tokens", "call_precision", "selection_accuracy"]


def test_a_tie_does_not_adopt() -> None:
    d = decide(mrow(resolved=11), CURRENT)
    assert not d.adopt and not d.criteria["resolve"].passed
    assert d.verdict == "NOT ADOPTED — failed: resolve (tie 0.55 = 0.55)"


def test_the_verdict_lists_every_failed_criterion() -> None:
    d = decide(mrow(resolved=11, cost=0.324), CURRENT)
    assert d.verdict == "NOT ADOPTED — failed: resolve (tie 0.55 = 0.55), cost 1.62× > 1.5×"


def test_a_worse_resolve_fails() -> None:
    d = decide(mrow(resolved=10), CURRENT)
    assert d.criteria["resolve"].detail == "resolve 0.50 < 0.55 (−0.05)"


def test_cost_exactly_one_and_a_half_times_passes() -> None:
    # In floats 1.5 * 0.7 = 1.0499999999999998 < 1.05; the rule is read in exact decimals.
    assert decide(mrow(resolved=12, cost=1.05), mrow(cost=0.7)).criteria["cost"].passed
    assert decide(mrow(resolved=12, cost=0.3), mrow(cost=0.2)).adopt


def test_cost_a_hair_over_one_and_a_half_times_fails() -> None:
    over = math.nextafter(0.3, 1.0)
    c = decide(mrow(resolved=12, cost=over), mrow(cost=0.2)).criteria["cost"]
    assert not c.passed
    # The printed ratio must not read "1.50× > 1.5×".
    assert c.detail.startswith("cost 1.5") and c.detail.endswith("× > 1.5×")
    assert c.detail != "cost 1.50× > 1.5×"


def test_tokens_boundary() -> None:
    assert decide(mrow(resolved=12, tokens_total=30_000), CURRENT).criteria["tokens"].passed
    c = decide(mrow(resolved=12, tokens_total=30_001), CURRENT).criteria["tokens"]
    assert not c.passed and "> 1.5×" in c.detail


@pytest.mark.parametrize(
    ("measure", "counts"),
    [
        ("call_precision", ("necessary", "calls")),
        ("selection_accuracy", ("sel_correct", "sel_attempted")),
    ],
)
def test_a_regression_of_003_passes_and_0031_fails(measure: str, counts: tuple[str, str]) -> None:
    num, den = counts
    current = mrow(**{num: 800, den: 1000})
    at = decide(mrow(resolved=12, **{num: 770, den: 1000}), current).criteria[measure]
    assert at.passed, at.detail
    assert at.detail == f"{measure} 0.770 vs 0.800 (−0.030 ≥ −0.03)"
    beyond = decide(mrow(resolved=12, **{num: 769, den: 1000}), current).criteria[measure]
    assert not beyond.passed
    assert beyond.detail == f"{measure} 0.769 vs 0.800 (−0.031 < −0.03)"


def test_a_regression_hidden_by_rounding_is_printed_with_enough_digits() -> None:
    c = decide(mrow(resolved=12, necessary=1539, calls=2000), mrow(necessary=80, calls=100))
    detail = c.criteria["call_precision"].detail
    assert not c.criteria["call_precision"].passed
    assert "−0.0305 < −0.03" in detail


def test_unknown_cost_cannot_pass() -> None:
    d = decide(mrow(resolved=15, cost=math.nan), CURRENT)
    assert not d.adopt
    detail = d.criteria["cost"].detail
    assert "cost unknown for the candidate" in detail and "unpriced" in detail
    assert detail in d.verdict
    assert "cost unknown for current" in decide(mrow(resolved=15), mrow(cost=math.nan)).verdict


def test_no_calls_cannot_show_no_precision_regression() -> None:
    d = decide(mrow(resolved=15, necessary=0, calls=0), CURRENT)
    assert not d.adopt
    assert "call_precision unknown for the candidate (no tool calls)" in d.verdict


def test_a_free_current_arm_only_admits_a_free_candidate() -> None:
    assert decide(mrow(resolved=12, cost=0.0), mrow(cost=0.0)).criteria["cost"].passed
    assert not decide(mrow(resolved=12, cost=0.01), mrow(cost=0.0)).criteria["cost"].passed


def test_decision_is_immutable() -> None:
    d = decide(mrow(resolved=15), CURRENT)
    with pytest.raises(AttributeError):
        d.adopt = False  # type: ignore[misc]


def test_no_decision_without_both_arms() -> None:
    assert no_decision_reason(["current", "policy", "policy-no:x"]) is None
    assert no_decision_reason(["policy"]) == "no decision: the current arm was not run"
    assert no_decision_reason(["current"]) == "no decision: the policy arm was not run"
    assert "neither" in no_decision_reason([])


def test_a_side_with_no_measured_item_is_named_as_the_cause() -> None:
    """Every item of the candidate was a model error: its cost is unknown because nothing was
    measured, not because the model is unpriced."""
    empty = mrow(resolved=0, n=0, cost=math.nan, calls=0, sel_attempted=0)
    verdict = decide(empty, CURRENT).verdict
    assert "cost unknown for the candidate (no measured item in the candidate)" in verdict
    assert "unpriced" not in verdict and "no tool calls" not in verdict


def test_a_free_model_on_both_sides_passes_the_cost_criterion() -> None:
    """A local model is priced 0: 0 ≤ 1.5 × 0."""
    assert decide(mrow(resolved=12, cost=0.0), mrow(cost=0.0)).criteria["cost"].passed


def test_a_local_models_unknown_cost_is_not_called_unpriced() -> None:
    """A local model is priced at 0: a cost it lacks is a reply without token usage."""
    local = mrow(resolved=15, cost=math.nan, model="local:gemma3-270m", cost_unknown=2)
    c = decide(local, CURRENT).criteria["cost"]
    assert not c.passed and "unpriced" not in c.detail
    assert c.detail == (
        "cost unknown for the candidate (no cost for 2 of 20 items, though local:gemma3-270m is"
        " priced local at $0: a call failed or reported no usage) \u2014 cannot show \u2264 1.5\u00d7"
    )


def test_an_unknown_cost_names_the_side_it_is_unknown_on() -> None:
    current = mrow(cost=math.nan, cost_unknown=1, model="openai:gpt-x")
    detail = decide(mrow(resolved=15, model="openai:gpt-x"), current).criteria["cost"].detail
    assert detail.startswith(
        "cost unknown for current (no cost for 1 of 20 items: an unpriced model, or a call that"
        " failed or reported no usage)"
    )


# -- criteria that are not judged -----------------------------------------------------------

NO_LABELS = {"sel_correct": 0, "sel_attempted": 0, "labelled_hand": 0, "unlabelled": 20}
# Wins resolve, cost, tokens and precision outright.
WINNER = {"resolved": 15, "cost": 0.1, "tokens_total": 10_000, "necessary": 90}


def test_selection_without_any_gold_label_is_not_judged_and_does_not_block() -> None:
    """Real SWE-bench rows: no instance has a gold label, so selection accuracy is NaN in both
    arms. It used to fail the rule ("unknown for the candidate"), so nothing could be adopted."""
    d = decide(mrow(**WINNER, **NO_LABELS), mrow(resolved=11, **NO_LABELS))
    c = d.criteria["selection_accuracy"]
    assert (c.state, c.judged, c.passed) == ("not judged", False, False)
    assert c.detail == "selection_accuracy not judged: no gold labels for any of these instances"
    assert d.adopt
    assert d.verdict == (
        "ADOPT (4 of 5 criteria judged; selection_accuracy not judged: no gold labels for any of"
        " these instances)"
    )
    assert [c.name for c in d.not_judged] == ["selection_accuracy"]


def test_an_external_agents_hidden_calls_are_not_judged() -> None:
    """A cmd: agent as current: its calls are not visible, and no external agent's calls can be
    removed and rerun; both criteria that need them are not judged, saying why."""
    hidden = {"calls_hidden": 20, "precision_hidden": 20, "agent": "cmd:python a.py", "n": 20}
    d = decide(mrow(**WINNER), mrow(resolved=11, **hidden))
    assert d.criteria["call_precision"].detail == (
        "call_precision not judged: cmd:python a.py does not show its tool calls to the harness"
        " (current)"
    )
    assert d.criteria["selection_accuracy"].state == "not judged"
    steps = {"calls_hidden": 0, "precision_hidden": 20, "agent": "mini-swe-agent", "n": 20}
    d = decide(mrow(**WINNER), mrow(resolved=11, **steps))
    assert d.criteria["call_precision"].detail == (
        "call_precision not judged: mini-swe-agent's calls cannot be removed one at a time and"
        " rerun (no counterfactual) (current)"
    )
    assert d.criteria["selection_accuracy"].state != "not judged"  # its steps are scored


def test_a_rejection_says_what_was_not_judged_too() -> None:
    d = decide(mrow(resolved=11, **NO_LABELS), mrow(resolved=11, **NO_LABELS))
    assert not d.adopt
    assert d.verdict == (
        "NOT ADOPTED \u2014 failed: resolve (tie 0.55 = 0.55) (4 of 5 criteria judged;"
        " selection_accuracy not judged: no gold labels for any of these instances)"
    )


def test_labels_without_a_scored_selection_still_fail() -> None:
    """Labelled instances where the arm made no selection: observable, and not shown no worse."""
    d = decide(mrow(**WINNER, sel_correct=0, sel_attempted=0), CURRENT)
    assert not d.adopt and d.criteria["selection_accuracy"].state == "failed"
    assert "selection_accuracy unknown for the candidate (no scored selections)" in d.verdict


@pytest.mark.parametrize(
    ("measure", "counts", "expected"),
    [
        ("resolve", {"n": 0, "resolved": 0}, "resolve unknown for the candidate"),
        ("cost", {"cost": math.nan}, "cost unknown for the candidate"),
        ("tokens", {"n": 0, "resolved": 0}, "tokens unknown for the candidate"),
    ],
)
def test_resolve_cost_and_tokens_unknown_still_fail_without_labels(
    measure: str, counts: dict[str, float], expected: str
) -> None:
    d = decide(mrow(**{**WINNER, **NO_LABELS, **counts}), mrow(resolved=11, **NO_LABELS))
    assert not d.adopt and d.criteria[measure].state == "failed"
    assert expected in d.criteria[measure].detail


def test_selection_is_judged_on_the_labelled_instances_when_some_have_labels() -> None:
    """Derived labels count as labels: the criterion is judged, exact thresholds included."""
    labels = {"labelled_hand": 0, "labelled_derived": 12, "unlabelled": 8}
    current = mrow(sel_correct=800, sel_attempted=1000, **labels)
    at = decide(mrow(**WINNER, sel_correct=770, sel_attempted=1000, **labels), current)
    assert at.adopt and at.verdict == "ADOPT"
    beyond = decide(mrow(**WINNER, sel_correct=769, sel_attempted=1000, **labels), current)
    assert beyond.criteria["selection_accuracy"].state == "failed"


def test_a_side_that_cannot_observe_is_named() -> None:
    d = decide(mrow(**WINNER), mrow(resolved=11, **NO_LABELS))
    assert d.criteria["selection_accuracy"].detail == (
        "selection_accuracy not judged: no gold labels for any of these instances (current)"
    )


def test_endpoint_errors_that_could_change_the_verdict_leave_none() -> None:
    """Each item the endpoint ended is measured as not resolved: here a tie. Counted resolved
    in the candidate it would win, so the endpoint, not the candidate, decided it: no verdict."""
    candidate = mrow(resolved=11, model_errors=2)
    d = decide(candidate, CURRENT)
    assert not d.adopt and d.undecided is not None
    assert d.verdict == (
        "no verdict: endpoint errors on 2 instances (current 0, the candidate 2) could change"
        " it: counted resolved in the candidate, ADOPT; in current, NOT ADOPTED \u2014 failed:"
        " resolve (tie 0.55 = 0.55)"
    )
    # the criteria stay as measured
    assert d.criteria["resolve"].detail == "resolve (tie 0.55 = 0.55)"


def test_endpoint_errors_in_current_can_take_a_win_away_too() -> None:
    named = mrow(resolved=12, model_errors=0).rename("policy")
    d = decide(named, mrow(resolved=11, model_errors=1).rename("current"))
    assert d.verdict.startswith(
        "no verdict: endpoint errors on 1 instance (current 1, policy 0) could change it:"
        " counted resolved in policy, ADOPT; in current, NOT ADOPTED"
    )


@pytest.mark.parametrize(
    ("candidate", "current", "verdict"),
    [
        # a win whatever the one error in each arm was: 16 vs 11 at best, 15 vs 12 at worst
        (mrow(resolved=15, model_errors=1), mrow(resolved=11, model_errors=1), "ADOPT"),
        # a loss whatever it was: the cost fails either way
        (mrow(resolved=11, cost=0.4, model_errors=3), CURRENT, "NOT ADOPTED"),
    ],
)
def test_endpoint_errors_that_cannot_change_it_leave_the_verdict(
    candidate: object, current: object, verdict: str
) -> None:
    d = decide(candidate, current)  # type: ignore[arg-type]
    assert d.undecided is None and d.verdict.startswith(verdict)
