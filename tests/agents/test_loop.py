"""An external agent's run as the current arm's trajectory (``agents/loop.py``): a turn per
model call, the steps it reported as the calls of the turn that asked for them, and how it
ended in the outcomes the measures know."""

from __future__ import annotations

from pytest_toolpolicy.agents.bridge import Exchange, Fault
from pytest_toolpolicy.agents.external import ExternalRun
from pytest_toolpolicy.agents.loop import _outcome, _turn, _turns, attribute
from pytest_toolpolicy.models.base import Completion, Usage

SENT = ({"role": "user", "content": "fix it"},)


def exchange(index: int, error: str | None = None, at: float = 0.0) -> Exchange:
    """A served call, or (``error``) one refused or failed, as the bridge tells them apart: by
    who was at fault, the error's first words standing for it here."""
    done = None if error else Completion("ok", Usage(10, 2), 0.5, 0.1, model="m")
    fault = None
    if error:
        fault = next(f for w, f in FAULTS.items() if error.startswith(w))
    return Exchange(index, SENT, {}, done, error, at=at, fault=fault)


FAULTS: dict[str, Fault] = {
    "model error": "endpoint",
    "limit reached": "limit",
    "invalid": "request",
    "refused by the endpoint": "request",
}


def run(*exchanges: Exchange, stopped: str | None = None, code: int | None = 0,
        steps: tuple[dict, ...] = ()) -> ExternalRun:  # fmt: skip
    return ExternalRun(code, "Traceback ... boom", exchanges, stopped, steps, None, 1.0)


def test_steps_are_the_calls_of_the_turn_that_asked_for_them() -> None:
    steps = ({"call": 0, "tool": "bash", "args": {"command": "ls"}},
             {"call": 1, "tool": "bash", "args": {"command": "sed -i s/a/b/ x"}},
             {"exit_status": "Submitted"})  # fmt: skip
    done = run(exchange(0), exchange(1), steps=steps)
    turns = _turns(done)
    assert [t.request.args["command"] for t in turns if t.request] == ["ls", "sed -i s/a/b/ x"]
    assert turns[0].completion is not None and turns[0].completion["usage"]["prompt_tokens"] == 10
    assert _outcome(done).outcome == "stop"


def test_a_refused_call_costs_nothing_and_a_failed_one_is_unknown() -> None:
    refused = _turn(exchange(2, "limit reached: calls: 2 made"), [])
    bad = _turn(exchange(2, "refused by the endpoint: request rejected (400): context"), [])
    failed = _turn(exchange(2, "model error: endpoint down"), [])
    assert refused.completion and bad.completion and failed.completion
    assert (refused.completion["cost_usd"], refused.completion["usage"]["missing"]) == (0.0, False)
    # the endpoint answered 400 before generating anything: nothing spent, and known to be
    assert (bad.completion["cost_usd"], bad.completion["usage"]["missing"]) == (0.0, False)
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
    from pytest_toolpolicy.run.selection import replies_parsed
    from pytest_toolpolicy.types import Outcome, Trajectory

    steps = ({"call": 1, "tool": "bash", "args": {"command": "ls"}},)
    done = run(exchange(0), exchange(1), exchange(2, "limit reached: calls: 2 made"), steps=steps)
    turns = _turns(done)

    def trajectory(observable: bool) -> Trajectory:
        meta = {"agent": "mini-swe-agent", "calls_observable": observable}
        return Trajectory("x-1", "current", "current", "m", turns, Outcome("stop"), "", meta)

    assert replies_parsed(trajectory(True)) == (1, 2)  # the refused call is no reply
    assert replies_parsed(trajectory(False)) == (0, 0)  # a cmd: agent's: not known


def test_a_step_without_a_call_is_the_last_call_made_before_it() -> None:
    calls = (exchange(0, at=100.0), exchange(1, at=110.0), exchange(2, at=120.0))
    steps = (
        {"tool": "bash", "t": 99.0},  # before any call: none
        {"tool": "bash", "t": 100.5},
        {"tool": "bash", "t": 119.9},
        {"tool": "bash", "t": 130.0},
        {"tool": "bash", "call": 0, "t": 130.0},  # named: as named
        {"tool": "bash", "t": "soon"},  # neither: none
        {"tool": "bash", "call": True},  # a bool is no index
    )
    assert attribute(steps, calls) == [-1, 0, 1, 2, 0, -1, -1]


def test_a_python_agents_end_and_a_smolagents_submit() -> None:
    from pytest_toolpolicy.run.selection import moves
    from pytest_toolpolicy.types import Trajectory

    steps = ({"tool": "bash", "args": {"command": "grep -rn foo ."}, "t": 1.5},
             {"tool": "execute", "args": {"code": "x = 1"}, "t": 2.5},
             {"tool": "submit", "args": "not a dict", "t": 3.5},
             {"exit_status": "finished"})  # fmt: skip
    done = run(exchange(0, at=1.0), exchange(1, at=2.0), exchange(2, at=3.0), steps=steps)
    assert _outcome(done).outcome == "stop"
    turns = _turns(done)
    assert [t.executed[0].tool for t in turns] == ["bash", "execute", "submit"]
    assert turns[2].executed[0].args == {}  # what is not an object is no arguments
    meta = {"agent": "python:a:b", "calls_observable": True}
    for patch, last in (("diff --git a/x b/x", "stop"), ("", "ask_user")):
        trajectory = Trajectory(
            "x-1", "current", "current", "m", turns, _outcome(done), patch, meta
        )
        assert moves(trajectory) == [
            frozenset({"search_symbol", "search_code"}),
            frozenset({"execute"}),
            frozenset({last}),  # a submit with nothing changed is how the baseline abstains
        ]
    hidden = Trajectory("x-1", "current", "current", "m", turns, _outcome(done), "",
                        {"agent": "cmd:x", "calls_observable": False})  # fmt: skip
    assert moves(hidden) == []  # no decision point is known: none scored


def test_an_external_agent_never_runs_in_a_degraded_sandbox(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import pytest

    from pytest_toolpolicy.agents.bridge import BridgeLimits
    from pytest_toolpolicy.agents.external import ExternalAgentError, Launch, run_external
    from pytest_toolpolicy.primitives.sandbox import Sandbox

    degraded = Sandbox("degraded", reason="no user namespaces here")
    with pytest.raises(ExternalAgentError, match="no user namespaces here.*host's files"):
        run_external(Launch(("true",)), workspace=tmp_path, task="t", model=None,  # type: ignore[arg-type]
                     limits=BridgeLimits(), sandbox=degraded)  # fmt: skip


def test_a_run_that_ends_on_its_own_refused_request_is_measured_never_a_model_error() -> None:
    """Refused by the bridge or by the endpoint, a bad request is the agent's: the run ends
    as the agent ended it, never as ``model_error`` (which would take its instance out)."""
    for error in ("invalid temperature: 5 (expected a number 0..2)",
                  "refused by the endpoint: request rejected (400): temperature too high"):  # fmt: skip
        crashed = _outcome(run(exchange(0), exchange(1, error), code=1))
        assert crashed.outcome == "budget_exhausted"
        assert crashed.detail["reason"] == (
            f"the agent ended without finishing: exit 1; its last request was refused: {error}"
        )
        finished = _outcome(run(exchange(0), exchange(1, error), code=0))
        assert finished.outcome == "stop"  # what the agent's own exit says
