"""A rerun's model serves the original run's answers by (turn, request); the suppressor removes one
call and its repeats."""

from __future__ import annotations

import pytest

from pytest_toolpolicy.models.base import Completion, ModelError, ModelRequest
from pytest_toolpolicy.models.scripted import ScriptedModel
from pytest_toolpolicy.run.replay import RecordedModel, Suppressor
from pytest_toolpolicy.types import ToolCall

PRICED = {"text": "a", "usage": {"prompt_tokens": 10, "completion_tokens": 2}, "cost_usd": 0.5}
UNPRICED = {"text": "b", "usage": {"prompt_tokens": 7, "completion_tokens": 1}, "cost_usd": None}


def request(content: str = "hi", turn: int = 0) -> ModelRequest:
    return ModelRequest(messages=({"role": "user", "content": content},), turn=turn)


def test_without_serving_every_request_goes_to_the_model_and_is_recorded() -> None:
    inner = ScriptedModel([PRICED, UNPRICED])
    record: dict[tuple[int, str], Completion] = {}
    model = RecordedModel(inner, record, serve=False)
    assert model.name == "scripted"
    first = model.complete(request())
    second = model.complete(request())
    assert (first.text, second.text) == ("a", "b")
    assert inner.used == 2
    # Kept under (turn, request) and under the request alone: the first answer both times.
    assert len(record) == 2 and all(c is first for c in record.values())
    assert (model.stats.calls, model.stats.served) == (2, 0)


def test_serving_answers_a_seen_turn_and_request_without_the_model() -> None:
    record: dict[object, Completion] = {}
    original = RecordedModel(ScriptedModel([PRICED]), record, serve=False)
    recorded = original.complete(request(turn=3))

    inner = ScriptedModel([UNPRICED, UNPRICED])
    rerun = RecordedModel(inner, record, serve=True)
    assert rerun.complete(request(turn=3)) is recorded
    assert rerun.complete(request(turn=4)) is recorded  # same request, another turn: served
    assert inner.used == 0
    assert rerun.complete(request("other", turn=3)).text == "b"  # another request: live
    assert inner.used == 1
    assert (rerun.stats.calls, rerun.stats.served) == (1, 2)


def test_the_same_turn_answer_wins_over_another_turns() -> None:
    """The original run asked one thing twice and got two answers: a replay gets each back at
    its own turn, so the replayed prefix is exact."""
    record: dict[object, Completion] = {}
    original = RecordedModel(ScriptedModel([PRICED, UNPRICED]), record, serve=False)
    first = original.complete(request(turn=0))
    second = original.complete(request(turn=1))
    assert first.text != second.text
    rerun = RecordedModel(ScriptedModel([]), record, serve=True)
    assert rerun.complete(request(turn=1)) is second
    assert rerun.complete(request(turn=0)) is first
    assert rerun.complete(request(turn=7)) is first  # unseen turn: the request's first answer


def test_a_model_error_propagates_and_is_not_recorded() -> None:
    record: dict[tuple[int, str], Completion] = {}
    model = RecordedModel(ScriptedModel([]), record, serve=True)
    with pytest.raises(ModelError, match="no reply left"):
        model.complete(request())
    assert record == {}
    assert (model.stats.calls, model.stats.tokens, model.stats.unpriced) == (0, 0, 0)


def test_stats_sum_cost_and_tokens_and_count_unpriced_answers() -> None:
    model = RecordedModel(ScriptedModel([PRICED, UNPRICED, PRICED]), {}, serve=True)
    for turn in range(3):
        model.complete(request(f"ask {turn}", turn=turn))
    model.complete(request("ask 0", turn=0))  # served: costs nothing
    stats = model.stats
    assert (stats.calls, stats.served) == (3, 1)
    assert stats.cost_usd == pytest.approx(1.0)
    assert stats.unpriced == 1
    assert stats.tokens == 12 + 8 + 12


def test_a_model_without_a_name_is_named_by_a_placeholder() -> None:
    class Bare:
        def complete(self, request: ModelRequest) -> Completion:
            raise AssertionError("not called")

    assert RecordedModel(Bare(), {}, serve=True).name == "?"  # type: ignore[arg-type]


def test_suppressor_removes_the_kth_call_and_later_equal_calls_only() -> None:
    read = ToolCall("read_entity", {"selector": "pkg.f"})
    other = ToolCall("read_entity", {"selector": "pkg.g"})
    run = ToolCall("run_test", {"target": "tests"})
    suppress = Suppressor(2)
    offered = [read, run, read, other, read, ToolCall("read_entity", {"selector": "pkg.f"}), run]
    assert [suppress(call) for call in offered] == [False, False, True, False, True, True, False]
    assert suppress.removed == read


def test_suppressor_past_the_last_call_removes_nothing() -> None:
    suppress = Suppressor(5)
    calls = [ToolCall("execute", {"code": str(i)}) for i in range(3)]
    assert [suppress(c) for c in calls] == [False, False, False]
    assert suppress.removed is None and suppress.seen == 3


def test_suppressor_at_zero_removes_the_first_call() -> None:
    suppress = Suppressor(0)
    first, second = ToolCall("execute", {"code": "1"}), ToolCall("execute", {"code": "2"})
    assert [suppress(first), suppress(second), suppress(first)] == [True, False, True]
