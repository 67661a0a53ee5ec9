"""How the simulator counts its own progress from a ledger window that no longer shows its
first edits (``policy_arm._done``): a long run of edits of one entity looks alike at several
positions of the plan."""

from __future__ import annotations

from pytest_toolpolicy.models.sim.gold import Edit
from pytest_toolpolicy.models.sim.policy_arm import _done


def _plan(*selectors: str) -> tuple[Edit, ...]:
    return tuple(Edit("m.py", s, f"old {i}", f"new {i}") for i, s in enumerate(selectors))


PLAN = _plan("m", "m.A.f", "m.A.f", "m.A.f", "m.A.f", "m.g", "m.g")


def _commit(selector: str) -> str:
    return f"edit_entity, {selector}, committed"


def test_a_read_after_the_visible_commits_places_the_plan() -> None:
    """Four edits of ``m.A.f`` are done; the window shows only the last three, which fit the
    plan after the second, third or fourth. The read of ``m.g`` says the fourth: ``m.g`` is
    next, not an edit already made."""
    lines = [_commit("m.A.f")] * 3 + ["read_entity, m.g, def g(): ..."]
    assert _done(PLAN, lines, truncated=True) == 5


def test_without_a_read_the_first_consistent_position_stands() -> None:
    assert _done(PLAN, [_commit("m.A.f")] * 3, truncated=True) == 4
    assert _done(PLAN, [_commit("m.A.f")] * 3, truncated=False) == 3


def test_a_failed_read_places_nothing() -> None:
    lines = [_commit("m.A.f")] * 3 + ["read_entity, m.g, error: no such entity"]
    assert _done(PLAN, lines, truncated=True) == 4
