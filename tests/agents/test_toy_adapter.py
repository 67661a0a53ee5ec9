"""A new agent adapter is one file and one registry line: ``toy_adapter.py``, registered here,
plays the current arm through the real sandbox and bridge, named like any shipped adapter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_toolpolicy.agents.spec import AgentSpec, AgentSpecError, parse_agent
from pytest_toolpolicy.arm_registry import ARMS, Adapter
from pytest_toolpolicy.models.scripted import ScriptedModel

from . import toy_adapter
from .adapters import SANDBOX, run_adapter

STOP = {"text": json.dumps({"tool": "stop", "args": {"reason": "nothing to do"}}),
        "usage": {"prompt_tokens": 123, "completion_tokens": 45}}  # fmt: skip
in_sandbox = pytest.mark.skipif(
    SANDBOX.mode != "bwrap", reason="an external agent runs only in the sandbox"
)


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(ARMS, "toy", Adapter(toy_adapter.__name__))  # the one registry line


def test_unregistered_it_is_unknown_registered_it_is_named_as_the_shipped_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(AgentSpecError, match="unknown agent 'toy': use builtin, cmd:COMMAND"):
        parse_agent("toy")
    monkeypatch.setitem(ARMS, "toy", Adapter(toy_adapter.__name__))
    assert parse_agent("toy", project="/p") == AgentSpec("toy", "", "/p")
    with pytest.raises(AgentSpecError, match=r"unknown agent 'toy:x': .*, smolagents, toy$"):
        parse_agent("toy:x")  # no ``check``: its name takes nothing after it


@in_sandbox
@pytest.mark.usefixtures("toy")
def test_the_toy_runs_in_the_sandbox_its_model_call_through_the_bridge(tmp_path: Path) -> None:
    model = ScriptedModel([{"text": "hello from the model", "usage": {"prompt_tokens": 7}}])
    run = run_adapter("toy", tmp_path, model, task="Say hello.", turns=2)
    assert run.exit_code == 0, run.output
    assert (tmp_path / "TOY.txt").read_text() == "hello from the model\n"
    assert run.steps == ({"call": 0, "tool": "write_file", "args": {"path": "TOY.txt"}},)
    (exchange,) = run.exchanges
    assert exchange.messages[-1]["content"] == "Say hello."


@in_sandbox
def test_the_toy_plays_the_current_arm_of_an_ab_session(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(toy_adapter=Path(toy_adapter.__file__).read_text())
    pytester.makeconftest(
        "from pytest_toolpolicy.arm_registry import ARMS, Adapter\n"
        "ARMS['toy'] = Adapter('toy_adapter')\n"
    )
    script = pytester.path / "replies.jsonl"
    script.write_text("\n".join(json.dumps(STOP) for _ in range(4)) + "\n")
    report = pytester.path / "report"
    result = pytester.runpytest_subprocess(
        "--toolpolicy=ab", f"--toolpolicy-model=scripted:{script}", "--toolpolicy-sample=1",
        "--toolpolicy-current=toy", f"--toolpolicy-report={report}", "--toolpolicy-no-view",
        "-p", "no:cacheprovider",
    )  # fmt: skip
    result.assert_outcomes(passed=2)
    rows = [json.loads(line) for line in (report / "trajectories.jsonl").read_text().splitlines()]
    (current,) = [r for r in rows if r["arm"] == "current"]
    meta = current["meta"]
    assert (meta["agent"], meta["agent_exit"], meta["calls_observable"]) == ("toy", 0, True)
    (turn,) = current["turns"]  # its one model call, the step it reported attributed to it
    assert turn["completion"]["usage"]["prompt_tokens"] == 123
    assert turn["executed"] == [{"tool": "write_file", "args": {"path": "TOY.txt"}}]
    assert current["outcome"]["outcome"] == "stop"
    assert "+++ b/TOY.txt" in current["patch"] and "nothing to do" in current["patch"]
    assert meta["call_precision_observable"] is False and meta["counterfactual"]["reruns"] == 0
    assert "toy's calls cannot be removed one at a time and rerun" in result.stdout.str()
