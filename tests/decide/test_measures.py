import math
from fractions import Fraction

import pytest

from pytest_toolpolicy.decide.exact import exact, to_fraction, unobservable
from pytest_toolpolicy.decide.measures import measures

from .results_factory import endpoint_error_rows, failed_rows, frame, item, variant_rows


def test_one_row_per_variant_in_table_order() -> None:
    rows = variant_rows("policy-no:trigger.test", [True])
    rows += variant_rows("policy-no:trust.round_trip", [True])
    rows += variant_rows("policy", [True]) + variant_rows("current", [False])
    rows += variant_rows("policy-no:retrieve.embed", [True])
    m = measures(frame(rows))
    assert list(m.index) == [
        "current",
        "policy",
        "policy-no:retrieve.embed",
        "policy-no:trust.round_trip",
        "policy-no:trigger.test",
    ]
    assert m.loc["policy-no:trigger.test", "gate"] == "trigger.test"
    assert m.loc["current", "arm"] == "current"


def test_the_five_measures_from_counts() -> None:
    rows = [
        item(instance_id="a", resolved=True, cost_usd=0.1, tokens=1000, calls=4, necessary_calls=3,
             selection_correct=3, selection_attempted=3),
        item(instance_id="b", resolved=False, cost_usd=0.2, tokens=3000, calls=6, necessary_calls=0,
             selection_correct=1, selection_attempted=3),
        item(instance_id="c", resolved=True, cost_usd=0.3, tokens=2000, calls=0, necessary_calls=0,
             selection_correct=0, selection_attempted=2),
        item(instance_id="d", resolved=False, cost_usd=0.0, tokens=0, calls=0, necessary_calls=0,
             selection_correct=0, selection_attempted=0, underspecified=True, abstained=True),
    ]  # fmt: skip
    r = measures(frame(rows)).loc["policy"]
    assert (r["n"], r["resolved"], r["resolve"]) == (4, 2, 0.5)
    assert r["cost"] == 0.15
    assert (r["tokens_total"], r["tokens"]) == (6000, 1500.0)
    assert (r["necessary"], r["calls"], r["call_precision"]) == (3, 10, 0.3)
    assert (r["sel_correct"], r["sel_attempted"]) == (4, 8)
    assert r["selection_accuracy"] == 0.5
    assert (r["underspecified"], r["abstained_correct"], r["abstention"]) == (1, 1, 1.0)
    assert exact(r, "resolve") == Fraction(1, 2)
    assert exact(r, "call_precision") == Fraction(3, 10)


def test_harness_errors_are_counted_and_excluded() -> None:
    rows = variant_rows("policy", [True, False])
    rows.append(item(instance_id="i-9", status="error", error="sandbox died", resolved=False,
                     cost_usd=math.nan, tokens=99999))  # fmt: skip
    r = measures(frame(rows)).loc["policy"]
    assert (r["n"], r["n_errors"], r["resolve"]) == (2, 1, 0.5)
    assert r["cost"] == 0.1 and r["tokens"] == 1000


def test_one_unpriced_item_makes_cost_unknown() -> None:
    rows = variant_rows("policy", [True, True])
    rows[1]["cost_usd"] = math.nan
    r = measures(frame(rows)).loc["policy"]
    assert math.isnan(r["cost"])
    assert exact(r, "cost") is None


def test_undefined_ratios_are_nan_not_zero() -> None:
    r = measures(frame(variant_rows("policy", [False], calls=0, necessary_calls=0,
                                    selection_attempted=0, selection_correct=0))).loc["policy"]  # fmt: skip
    assert math.isnan(r["call_precision"]) and exact(r, "call_precision") is None
    assert math.isnan(r["selection_accuracy"]) and exact(r, "selection_accuracy") is None
    assert math.isnan(r["abstention"])


def test_mean_cost_is_exact_in_decimal() -> None:
    # As floats, 0.1 + 0.1 + 0.1 = 0.30000000000000004; the decision rule must see 1/10.
    r = measures(frame(variant_rows("policy", [True] * 3, cost_usd=0.1))).loc["policy"]
    assert exact(r, "cost") == Fraction(1, 10)


def test_counterfactual_spend_is_reported_apart() -> None:
    r = measures(frame(variant_rows("policy", [True, True], cf_cost_usd=0.5))).loc["policy"]
    assert r["cf_cost_usd"] == 1.0 and r["cost"] == 0.1
    assert (r["cf_model_calls"], r["cf_tool_executions"]) == (16, 20)


def test_to_fraction_reads_the_written_decimal() -> None:
    assert to_fraction(0.3) == Fraction(3, 10)
    assert to_fraction(math.nan) is None
    with pytest.raises(ValueError, match="unknown measure"):
        exact(measures(frame(variant_rows("policy", [True]))).loc["policy"], "speed")


def test_an_instance_unmeasured_in_one_variant_is_left_out_of_all() -> None:
    rows = variant_rows("current", [False, False, True])
    rows += variant_rows("policy", [True, False, True])
    rows[3] = item(
        instance_id="i-0", variant="policy", status="error", error="harness fault: sandbox died"
    )
    m = measures(frame(rows))
    # i-0 failed in the policy arm, so both arms are measured on i-1 and i-2 only.
    assert (m.loc["current", "n"], m.loc["current", "resolved"]) == (2, 1)
    assert (m.loc["policy", "n"], m.loc["policy", "resolved"]) == (2, 1)
    assert (m.loc["current", "n_errors"], m.loc["policy", "n_errors"]) == (0, 1)


def test_a_variant_the_shared_sample_leaves_empty_shows_its_own_items() -> None:
    rows = failed_rows("current", 3) + variant_rows("policy", [True, False, True])
    m = measures(frame(rows))
    assert list(m["sample"]) == ["none", "own"]
    assert (m.loc["policy", "n"], m.loc["policy", "resolved"]) == (3, 2)
    assert m.loc["policy", "cost"] == pytest.approx(0.1) and m.loc["policy", "n_errors"] == 0
    assert (m.loc["current", "n"], m.loc["current", "n_errors"]) == (0, 3)
    assert math.isnan(m.loc["current", "resolve"])


def test_a_shared_sample_is_marked_shared_even_when_it_drops_instances() -> None:
    rows = variant_rows("current", [True, True]) + variant_rows("policy", [True, False])
    rows[2] = item(
        instance_id="i-0", variant="policy", status="error", error="harness fault: sandbox died"
    )
    m = measures(frame(rows))
    assert list(m["sample"]) == ["shared", "shared"] and list(m["n"]) == [1, 1]


def test_a_row_counts_its_items_without_a_cost_and_names_its_model() -> None:
    rows = variant_rows("policy", [True, True, True], model="local:gemma3-270m", cost_usd=0.0)
    rows[0]["cost_usd"] = math.nan
    r = measures(frame(rows)).loc["policy"]
    assert (r["cost_unknown"], r["model"]) == (1, "local:gemma3-270m")
    assert math.isnan(r["cost"])


def test_selection_is_scored_on_the_instances_labelled_in_every_variant() -> None:
    """An instance without a label in one variant is left out of every variant's selection
    accuracy: both arms are scored on the same labelled instances."""
    rows = [
        item(instance_id="a", variant="current", selection_correct=1, selection_attempted=3),
        item(instance_id="a", variant="policy", selection_correct=3, selection_attempted=3),
        item(instance_id="b", variant="current", selection_correct=2, selection_attempted=3,
             gold_source="derived"),
        item(instance_id="b", variant="policy", selection_correct=0, selection_attempted=3,
             gold_source="derived"),
        # Labelled for the policy, not for current (a row kept from an older session):
        item(instance_id="c", variant="current", selection_correct=0, selection_attempted=0,
             gold_source="none"),
        item(instance_id="c", variant="policy", selection_correct=3, selection_attempted=3),
    ]  # fmt: skip
    m = measures(frame(rows))
    for variant, correct in (("current", 3), ("policy", 3)):
        r = m.loc[variant]
        assert (r["sel_correct"], r["sel_attempted"]) == (correct, 6)
        assert (r["labelled_hand"], r["labelled_derived"], r["unlabelled"]) == (1, 1, 1)
        assert unobservable(r, "selection_accuracy") is None


def test_without_any_label_selection_is_unobservable_and_says_why() -> None:
    rows = variant_rows("policy", [True, False], gold_source="none", selection_correct=0,
                        selection_attempted=0)  # fmt: skip
    r = measures(frame(rows)).loc["policy"]
    assert (r["labelled_hand"], r["labelled_derived"], r["unlabelled"]) == (0, 0, 2)
    assert math.isnan(r["selection_accuracy"])
    assert unobservable(r, "selection_accuracy") == "no gold labels for any of these instances"
    for measure in ("resolve", "cost", "tokens", "call_precision"):
        assert unobservable(r, measure) is None


def test_rows_saved_before_gold_source_read_their_label_off_their_selections() -> None:
    rows = variant_rows("policy", [True]) + variant_rows(
        "policy", [True], start=1, selection_correct=0, selection_attempted=0
    )
    old = frame(rows).drop(columns=["gold_source"])
    r = measures(old).loc["policy"]
    assert (r["labelled_hand"], r["unlabelled"]) == (1, 1)
    assert (r["sel_correct"], r["sel_attempted"]) == (2, 3)


def test_an_endpoint_error_is_measured_unresolved_and_its_instance_stays_everywhere() -> None:
    """The endpoint ended policy's run on i-0: measured, as not resolved (whatever its
    workspace graded), at what it spent; no variant loses i-0."""
    rows = variant_rows("current", [False, False, True])
    rows += endpoint_error_rows("policy", 1, resolved=True, cost_usd=0.05)
    rows += variant_rows("policy", [False, True], start=1)
    m = measures(frame(rows))
    assert list(m["n"]) == [3, 3] and list(m["n_errors"]) == [0, 0]
    assert list(m["model_errors"]) == [0, 1]
    assert (m.loc["policy", "resolved"], m.loc["current", "resolved"]) == (1, 1)
    assert m.loc["policy", "cost"] == pytest.approx((0.05 + 0.1 + 0.1) / 3)
