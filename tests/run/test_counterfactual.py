"""Call precision: one rerun per executed call of a resolved run, its spend summed apart."""

from __future__ import annotations

import pytest

from pytest_toolpolicy.run.counterfactual import executed_calls, measure
from pytest_toolpolicy.run.memo import DispatchStats
from pytest_toolpolicy.run.replay import ModelStats, Suppressor
from pytest_toolpolicy.types import Outcome, ToolCall, Trajectory, Turn

READ = ToolCall("read_entity", {"selector": "pkg.f"})
EDIT = ToolCall("edit_entity", {"selector": "pkg.f", "search": "a", "replace": "b"})
TEST = ToolCall("run_test", {"target": "tests"})
SEARCH = ToolCall("search_symbol", {"query": "f"})

RUN = Trajectory(
    "inst",
    "policy",
    "full",
    "sim",
    (
        Turn(0, executed=(READ,)),
        Turn(1),  # a no-op turn runs nothing
        Turn(2, executed=(EDIT, TEST), suppressed=(SEARCH,)),  # suppressed calls never ran
        Turn(3, executed=(READ,)),
    ),
    Outcome("stop"),
)


class FakeRerun:
    """Ends unresolved when the suppressed call is in ``needed``; spends per rerun."""

    def __init__(self, needed: set[int]) -> None:
        self.needed = needed
        self.ordinals: list[int] = []

    def __call__(self, suppress: Suppressor) -> tuple[bool, ModelStats, DispatchStats]:
        assert isinstance(suppress, Suppressor) and suppress.seen == 0
        self.ordinals.append(suppress.ordinal)
        model = ModelStats(calls=1, served=2, cost_usd=0.25, unpriced=suppress.ordinal % 2)
        model.tokens = 100 + suppress.ordinal
        tools = DispatchStats(calls=4, executed=1, hits=3)
        return suppress.ordinal not in self.needed, model, tools


def test_executed_calls_are_the_calls_that_ran_in_order() -> None:
    assert executed_calls(RUN) == [READ, EDIT, TEST, READ]


def test_an_unresolved_run_is_counted_not_rerun() -> None:
    rerun = FakeRerun(set())
    got = measure(RUN, False, rerun)
    assert rerun.ordinals == []
    assert (got.calls, got.necessary, got.reruns, got.tool_calls) == (4, 0, 0, 0)
    assert got.per_call == []


def test_without_a_rerun_callback_nothing_is_rerun() -> None:
    got = measure(RUN, True, None)
    assert (got.calls, got.necessary, got.reruns) == (4, 0, 0)


def test_a_resolved_run_reruns_each_executed_call_once() -> None:
    rerun = FakeRerun({1, 2})
    got = measure(RUN, True, rerun)
    assert rerun.ordinals == [0, 1, 2, 3]
    assert (got.calls, got.reruns, got.necessary) == (4, 4, 2)
    assert got.per_call == [
        {"ordinal": 0, "tool": "read_entity", "necessary": False},
        {"ordinal": 1, "tool": "edit_entity", "necessary": True},
        {"ordinal": 2, "tool": "run_test", "necessary": True},
        {"ordinal": 3, "tool": "read_entity", "necessary": False},
    ]


def test_rerun_spend_is_summed_from_the_stats() -> None:
    got = measure(RUN, True, FakeRerun(set()))
    assert (got.model_calls, got.model_served) == (4, 8)
    assert got.cost_usd == pytest.approx(1.0)
    assert got.unpriced == 2  # ordinals 1 and 3
    assert got.tokens == 100 + 101 + 102 + 103
    assert (got.tool_calls, got.tool_executions) == (16, 4)


def test_a_resolved_run_without_calls_has_nothing_to_rerun() -> None:
    empty = Trajectory("inst", "policy", "full", "sim", (Turn(0),), Outcome("stop"))
    rerun = FakeRerun(set())
    got = measure(empty, True, rerun)
    assert rerun.ordinals == [] and (got.calls, got.reruns, got.necessary) == (0, 0, 0)
