"""A trajectory read from JSON is checked where it is built (``Trajectory.from_dict``): every
field of the wrong shape is a ``RecordError`` that names it, so no reader meets it later."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from pytest_toolpolicy.input_files import RecordError
from pytest_toolpolicy.types import Observation, Outcome, ToolCall, Trajectory, Turn

COMPLETION = {"text": "{}", "usage": {"prompt_tokens": 3, "completion_tokens": 1},
              "cost_usd": 0.0, "extra": {}}  # fmt: skip
GOOD = Trajectory(
    "i-1", "policy", "policy", "m",
    (Turn(0, [{"role": "user", "content": "fix"}], COMPLETION, ToolCall("read_entity", {}),
          observations=(Observation("read_entity", "m.f", "ok", cites=("m.f",)),)),),
    Outcome("stop", {"reason": "done"}), meta={"trial": 2, "grade": {"resolved": True}},
)  # fmt: skip


def test_a_good_record_round_trips() -> None:
    assert Trajectory.from_dict(json.loads(json.dumps(GOOD.to_dict()))) == GOOD
    assert Trajectory.from_dict(GOOD.to_dict()) == GOOD  # as to_dict leaves it, tuples and all


def edit(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    record = json.loads(json.dumps(GOOD.to_dict()))
    change(record)
    return record


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda r: r.update(turns="oops"), "turns is not a list but a string"),
        (lambda r: r["turns"].__setitem__(0, 5), "turns[0] is not an object but a number"),
        (lambda r: r["turns"][0]["completion"]["usage"].update(completion_tokens=None),
         "turns[0].completion.usage.completion_tokens is not a number but null"),
        (lambda r: r["turns"][0]["completion"].update(cost_usd="$1"),
         "turns[0].completion.cost_usd is not a number but a string"),
        (lambda r: r["turns"][0]["request"].update(args=[]),
         "turns[0].request.args is not an object but a list"),
        (lambda r: r["turns"][0]["observations"][0].update(cites="m.f"),
         "turns[0].observations[0].cites is not a list but a string"),
        (lambda r: r["turns"][0].update(index=True), "turns[0].index is not a whole number"),
        (lambda r: r.update(outcome="stop"), "outcome is not an object but a string"),
        (lambda r: r["meta"].update(trial="2"), "meta.trial is not a whole number but a string"),
        (lambda r: r.pop("model"), "the record lacks model"),
        (lambda r: r.update(extra=1), "the record has an unknown field 'extra'"),
    ],
)  # fmt: skip
def test_each_field_of_the_wrong_shape_is_named(
    change: Callable[[dict[str, Any]], None], why: str
) -> None:
    with pytest.raises(RecordError) as refused:
        Trajectory.from_dict(edit(change))
    assert str(refused.value).startswith(why)


def test_a_record_that_is_no_object_is_refused() -> None:
    with pytest.raises(RecordError, match="the record is not an object but a list"):
        Trajectory.from_dict([])
