from __future__ import annotations

import pytest

from pytest_toolpolicy.models import Budget, Completion, Usage


def paid(cost: float | None) -> Completion:
    return Completion("ok", Usage(100, 10), cost, 0.1)


def test_the_cost_cap_binds_once_reached() -> None:
    budget = Budget(max_usd=0.05)
    budget = budget.charge(paid(0.02)).charge(paid(0.02))
    assert not budget.exhausted and budget.spent_usd == pytest.approx(0.04)
    budget = budget.charge(paid(0.02))
    assert budget.exhausted
    assert budget.reason == "cost cap $0.05 reached: $0.06 spent"


def test_the_turn_cap_binds_at_max_turns() -> None:
    budget = Budget(max_turns=2).charge(paid(0.0))
    assert not budget.exhausted
    budget = budget.charge(paid(0.0))
    assert budget.exhausted and budget.reason == "turn cap 2 reached"


def test_unknown_cost_is_recorded_and_never_counted_as_zero() -> None:
    budget = Budget(max_usd=0.05).charge(paid(None)).charge(paid(0.01))
    assert budget.spent_usd is None  # not $0.01
    assert budget.known_usd == pytest.approx(0.01)
    assert not budget.usd_cap_enforceable and not budget.exhausted
    record = budget.record()
    assert (record["unpriced"], record["usd_cap_enforceable"], record["spent_usd"]) == (
        1,
        False,
        None,
    )


def test_known_spend_past_the_cap_still_binds_with_unknown_costs() -> None:
    budget = Budget(max_usd=0.05).charge(paid(None)).charge(paid(0.07))
    assert budget.exhausted
    assert budget.reason == "cost cap $0.05 reached: $0.07 spent plus 1 of unknown cost"


def test_no_caps_never_exhaust_and_charging_leaves_the_original_alone() -> None:
    start = Budget()
    later = start.charge(paid(5.0))
    assert start.turns == 0 and later.turns == 1 and not later.exhausted
    assert later.usd_cap_enforceable


@pytest.mark.parametrize("kwargs", [{"max_usd": -0.01}, {"max_turns": 0}])
def test_nonsense_caps_are_refused(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        Budget(**kwargs)
