"""An external agent's run as the current arm's trajectory (``agents/loop.py``): a turn per
model call, the steps it reported as the calls of the turn that asked for them, and how it
ended in the outcomes the measures know."""

from __future__ import annotations

from pytest_toolpolicy.agents.bridge import Exchange
from pytest_toolpolicy.agents.external import ExternalRun
from pytest_toolpolicy.agents.loop import _outcome, _turn
from pytest_toolpolicy.models.base import Completion, Usage

SENT = ({"role": "user", "content": "fix it"},)


def exchange(index: int, error: str | None = None) -> Exchange:
    done = None if error else Completion("ok", Usage(10, 2), 0.5, 0.1, model="m")
    return Exchange(index, SENT, {}, done, error)


def run(*exchanges: Exchange, stopped: str | None = None, code: int | None = 0,
        steps: tuple[dict, ...] = ()) -> ExternalRun:  # fmt: skip
    return ExternalRun(code, "Traceback ... boom", exchanges, stopped, steps, None, 1.0)


def test_steps_are_the_calls_of_the_turn_that_asked_for_them() -> None:
    steps = ({"call": 0, "tool": "bash", "args": {"command": "ls"}},
             {"call": 1, "tool": "bash", "args": {"command": "sed -i s/a/b/ x"}},
             {"exit_status": "Submitted"})  # fmt: skip
    done = run(exchange(0), exchange(1), steps=steps)
    turns = [_turn(e, done) for e in done.exchanges]
    assert [t.request.args["command"] for t in turns if t.request] == ["ls", "sed -i s/a/b/ x"]
    assert turns[0].completion is not None and turns[0].completion["usage"]["prompt_tokens"] == 10
    assert _outcome(done).outcome == "stop"


def test_a_refused_call_costs_nothing_and_a_failed_one_is_unknown() -> None:
    refused = _turn(exchange(2, "limit reached: calls: 2 made"), run())
    failed = _turn(exchange(2, "model error: endpoint down"), run())
    assert refused.completion is not None and failed.completion is not None
    assert (refused.completion["cost_usd"], refused.completion["usage"]["missing"]) == (0.0, False)
    assert (failed.completion["cost_usd"], failed.completion["usage"]["missing"]) == (None, True)


def test_how_a_run_ended() -> None:
    limited = _outcome(run(exchange(0), stopped="calls: 30 made", code=None))
    assert (limited.outcome, limited.detail["limit"]) == ("budget_exhausted", "calls: 30 made")
    broken = _outcome(run(exchange(0), exchange(1, "model error: endpoint down"), code=1))
    assert (broken.outcome, broken.detail["reason"]) == (
        "model_error",
        "model error: endpoint down",
    )
    crashed = _outcome(run(exchange(0), code=1))  # not its decision to stop: no abstention
    assert crashed.outcome == "budget_exhausted" and crashed.detail["output_tail"].endswith("boom")
    assert crashed.detail["reason"] == "the agent ended without finishing: exit 1"
    own_limit = _outcome(run(exchange(0), code=3, steps=({"exit_status": "LimitsExceeded"},)))
    assert own_limit.detail["reason"] == "the agent ended without finishing: LimitsExceeded"
    submitted = _outcome(run(exchange(0), code=0, steps=({"exit_status": "Submitted"},)))
    assert submitted.outcome == "stop"


def test_an_external_agents_replies_count_as_parsed_where_it_acted_on_them() -> None:
    from pytest_toolpolicy.ab.selection import replies_parsed
    from pytest_toolpolicy.types import Outcome, Trajectory

    steps = ({"call": 1, "tool": "bash", "args": {"command": "ls"}},)
    done = run(exchange(0), exchange(1), exchange(2, "limit reached: calls: 2 made"), steps=steps)
    turns = tuple(_turn(e, done) for e in done.exchanges)

    def trajectory(observable: bool) -> Trajectory:
        meta = {"agent": "mini-swe-agent", "calls_observable": observable}
        return Trajectory("x-1", "current", "current", "m", turns, Outcome("stop"), "", meta)

    assert replies_parsed(trajectory(True)) == (1, 2)  # the refused call is no reply
    assert replies_parsed(trajectory(False)) == (0, 0)  # a cmd: agent's: not known
