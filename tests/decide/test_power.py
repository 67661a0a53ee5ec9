"""Power of the paired resolve comparison (``decide/power.py``) against textbook values."""

from __future__ import annotations

import math

import pytest

from pytest_toolpolicy.decide.power import detectable_delta, pairs_needed, power_of


def test_pairs_needed_matches_connors_formula_worked_by_hand() -> None:
    # psi = 0.2, delta = 0.1, alpha = 0.05 two-sided, power 0.8:
    # (1.95996 * sqrt(0.2) + 0.84162 * sqrt(0.19))^2 / 0.01 = 154.6 -> 155 pairs
    assert pairs_needed(0.2, 0.1) == pytest.approx(154.6, abs=0.1)
    # a larger difference at the same discordance needs fewer pairs; a zero one, never
    assert pairs_needed(0.2, 0.2) < pairs_needed(0.2, 0.1)
    assert math.isinf(pairs_needed(0.2, 0.0))


def test_pairs_needed_matches_the_published_example() -> None:
    # Connor (1987), Biometrics 43(1), p. 209, as worked in the open-powersamplesize calculator
    # "McNemar's Z-test, 2-sided equality": p01 = 0.45, p10 = 0.05, alpha = 0.05, power 0.8
    # -> 23 pairs (22.01 before rounding up).
    assert math.ceil(pairs_needed(0.45 + 0.05, 0.05 - 0.45)) == 23
    assert pairs_needed(0.5, 0.4) == pytest.approx(22.01, abs=0.01)


def test_the_detectable_difference_is_the_inverse_of_pairs_needed() -> None:
    delta = detectable_delta(155, 0.2)
    assert delta == pytest.approx(0.1, abs=0.002)
    assert pairs_needed(0.2, delta) == pytest.approx(155, abs=0.5)


def test_a_small_sample_reports_why_no_difference_is_detectable() -> None:
    p = power_of(b=1, c=0, n=25)  # the bundled benchmark's size, one discordant pair
    assert math.isnan(p.detectable_delta) and p.note and "cannot reach 80% power" in p.note
    assert p.line().startswith("power: 25 pairs with discordance 0.040")


def test_a_sample_without_discordance_says_so() -> None:
    p = power_of(b=0, c=0, n=25)
    assert p.note and "no discordant pair in 25" in p.note and math.isinf(p.pairs_needed)


def test_power_line_of_a_sample_that_can_detect_something() -> None:
    p = power_of(b=30, c=10, n=200)  # psi 0.2, delta 0.1
    assert p.note is None
    assert p.detectable_delta == pytest.approx(detectable_delta(200, 0.2))
    assert math.ceil(p.pairs_needed) == 155
    assert "the observed +0.100 needs 155 pairs" in p.line()
