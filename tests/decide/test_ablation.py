import math

import pytest

from pytest_toolpolicy.decide.ablation import ablate, no_change_flags

from .measure_rows import mrow

FULL = mrow(resolved=15, cost=0.2, tokens_total=20_000)


def test_a_gate_whose_removal_changes_nothing_is_deleted() -> None:
    a = ablate("retrieve.embed", mrow(resolved=15), FULL)
    assert a.delete and a.changed == [] and a.verdict == "delete"
    assert all(no_change_flags(mrow(resolved=15), FULL).values())


@pytest.mark.parametrize(("cost", "tokens_total"), [(0.21, 21_000), (0.19, 19_000)])
def test_exactly_five_percent_is_still_no_change(cost: float, tokens_total: int) -> None:
    assert ablate("g", mrow(resolved=15, cost=cost, tokens_total=tokens_total), FULL).delete


def test_five_point_one_percent_keeps_the_gate() -> None:
    cost = ablate("g", mrow(resolved=15, cost=0.2102), FULL)
    assert not cost.delete and cost.changed == ["cost"]
    assert cost.verdict == "keep (cost +5.1%)"
    tokens = ablate("g", mrow(resolved=15, tokens_total=18_980), FULL)
    assert tokens.verdict == "keep (tokens −5.1%)"


def test_any_change_in_resolve_precision_or_selection_keeps_the_gate() -> None:
    a = ablate("trust.round_trip", mrow(resolved=12, tokens_total=22_400), FULL)
    assert a.verdict == "keep (resolve −0.15, tokens +12%)"
    assert a.changed == ["resolve", "tokens"]
    assert ablate("g", mrow(resolved=15, necessary=79), FULL).changed == ["call_precision"]
    assert ablate("g", mrow(resolved=15, sel_correct=81), FULL).changed == ["selection_accuracy"]
    flags = no_change_flags(mrow(resolved=12), FULL)
    assert flags["resolve"] is False and flags["cost"] is True


def test_unknown_measures_cannot_show_no_change() -> None:
    a = ablate("g", mrow(resolved=15, cost=math.nan), FULL)
    assert not a.delete and a.verdict == "keep (cost unknown)"
    both = ablate(
        "g", mrow(resolved=15, calls=0, necessary=0), mrow(resolved=15, calls=0, necessary=0)
    )
    assert not both.delete and both.changed == ["call_precision"]


def test_relative_change_against_a_free_policy() -> None:
    assert ablate("g", mrow(resolved=15, cost=0.0), mrow(resolved=15, cost=0.0)).delete
    a = ablate("g", mrow(resolved=15, cost=0.01), mrow(resolved=15, cost=0.0))
    assert a.verdict == "keep (cost +0.0100 from 0)"


NO_LABELS = {"sel_correct": 0, "sel_attempted": 0, "labelled_hand": 0, "unlabelled": 20}


def test_selection_without_gold_labels_is_not_judged_as_in_the_decision_rule() -> None:
    """On unlabelled instances selection accuracy is NaN on both sides: it used to keep every
    gate ("selection_accuracy unknown"); now the other four measures decide, and it says so."""
    full = mrow(resolved=15, **NO_LABELS)
    a = ablate("retrieve.embed", mrow(resolved=15, **NO_LABELS), full)
    assert a.delete and a.changed == []
    assert a.not_judged == {"selection_accuracy": "no gold labels for any of these instances"}
    assert a.verdict == (
        "delete (selection_accuracy not judged: no gold labels for any of these instances)"
    )
    flags = no_change_flags(mrow(resolved=15, **NO_LABELS), full)
    assert flags["selection_accuracy"] is None and flags["resolve"] is True


def test_a_kept_gate_names_what_moved_and_what_was_not_judged() -> None:
    full = mrow(resolved=15, **NO_LABELS)
    a = ablate("g", mrow(resolved=12, **NO_LABELS), full)
    assert not a.delete and a.changed == ["resolve"]
    assert a.verdict == (
        "keep (resolve \u22120.15; selection_accuracy not judged: no gold labels for any of these"
        " instances)"
    )


def test_unknown_measures_still_keep_the_gate_without_labels() -> None:
    a = ablate("g", mrow(resolved=15, cost=math.nan, **NO_LABELS), mrow(resolved=15, **NO_LABELS))
    assert not a.delete and a.changed == ["cost"]
