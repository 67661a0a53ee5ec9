"""smolagents 1.26.0 itself as the current arm (``adapters/smolagents_agent.py``): its
``CodeAgent`` in the sandbox, its replies from a script through the bridge. Each ``bash`` it
ran, each code action that ran none, and its ``final_answer`` are reported as steps of the call
they came of; the edit is in the workspace."""

from __future__ import annotations

from pathlib import Path

from pytest_toolpolicy.agents.loop import _outcome, _turns
from pytest_toolpolicy.models.scripted import ScriptedModel

from .adapters import marks, run_adapter

pytestmark = marks("smolagents", "smolagents")


def code(source: str) -> str:
    return f"Thought: next step.\n```python\n{source}\n```"


def test_smolagents_edits_and_answers_its_steps_reported(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text("def div(a, b):\n    return a // b\n")
    model = ScriptedModel([
        {"text": code('print(bash("cat calc.py"))'), "usage": {"prompt_tokens": 2000, "completion_tokens": 20}},
        {"text": code("x = 1 + 1"), "usage": {"prompt_tokens": 2100, "completion_tokens": 9}},
        {"text": code("bash(\"sed -i 's#//#/#' calc.py\")"), "usage": {"prompt_tokens": 2200, "completion_tokens": 22}},
        {"text": code('final_answer("div is exact now")'), "usage": {"prompt_tokens": 2300, "completion_tokens": 12}},
    ])  # fmt: skip
    run = run_adapter("smolagents", tmp_path, model, task="div(1, 2) returns 0; it should return 0.5",
                      turns=10, item="calc-1")  # fmt: skip
    assert run.exit_code == 0, run.output
    assert (tmp_path / "calc.py").read_text() == "def div(a, b):\n    return a / b\n"
    turns = _turns(run)
    assert [[(c.tool, dict(c.args)) for c in t.executed] for t in turns] == [
        [("bash", {"command": "cat calc.py"})],
        [("execute", {"code": "x = 1 + 1"})],
        [("bash", {"command": "sed -i 's#//#/#' calc.py"})],
        [("submit", {"answer": "div is exact now"})],
    ]
    assert _outcome(run).outcome == "stop"
    assert [e.completion.usage.prompt_tokens for e in run.exchanges if e.completion] == [
        2000, 2100, 2200, 2300
    ]  # fmt: skip
    first = run.exchanges[0]
    assert "div(1, 2) returns 0" in first.messages[-1]["content"]
    assert "Observation:" in first.params["stop"]  # its own stop sequences reach the model


def test_a_model_that_never_answers_ends_without_finishing(tmp_path: Path) -> None:
    model = ScriptedModel([code('bash("ls")')] * 6)
    run = run_adapter("smolagents", tmp_path, model, task="t", turns=3)
    assert len([e for e in run.exchanges if e.completion]) == 3
    assert _outcome(run).outcome == "budget_exhausted"
