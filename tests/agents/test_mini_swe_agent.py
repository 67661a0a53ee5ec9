"""mini-swe-agent 2.4.6 itself as the current arm (``adapters/mini_swe_agent.py``), in the
sandbox, its replies from a script through the bridge: what it ran is reported as steps, the
edit is in the workspace, and its end is mini-swe-agent's own exit status."""

from __future__ import annotations

from pathlib import Path

from pytest_toolpolicy.models.scripted import ScriptedModel

from .adapters import marks, run_adapter

pytestmark = marks("minisweagent", "mini-swe-agent")


def fence(command: str) -> str:
    return f"THOUGHT: next step.\n\n```mswea_bash_command\n{command}\n```"


def test_mini_swe_agent_edits_and_submits_its_steps_reported(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text("def div(a, b):\n    return a // b\n")
    model = ScriptedModel([
        {"text": fence("cat calc.py"), "usage": {"prompt_tokens": 900, "completion_tokens": 20}},
        {"text": "```bash\nsed -i 's#//#/#' calc.py\n```",  # the plain fence is taken too
         "usage": {"prompt_tokens": 950, "completion_tokens": 22}},
        {"text": fence("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"),
         "usage": {"prompt_tokens": 1000, "completion_tokens": 15}},
    ])  # fmt: skip
    run = run_adapter(
        "mini-swe-agent",
        tmp_path,
        model,
        task="div(1, 2) returns 0; it should return 0.5",
        turns=10,
    )
    assert run.exit_code == 0, run.output
    assert (tmp_path / "calc.py").read_text() == "def div(a, b):\n    return a / b\n"
    commands = [(s["call"], s["args"]["command"]) for s in run.steps if "call" in s]
    assert commands == [
        (0, "cat calc.py"),
        (1, "sed -i 's#//#/#' calc.py"),
        (2, "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"),
    ]
    assert run.steps[-1]["exit_status"] == "Submitted"
    # the tokens are the endpoint's (here the script's) report, call by call
    assert [e.completion.usage.prompt_tokens for e in run.exchanges if e.completion] == [
        900, 950, 1000
    ]  # fmt: skip
    assert "div(1, 2) returns 0" in run.exchanges[0].messages[-1]["content"]


def test_a_model_that_never_submits_ends_at_the_turn_budget(tmp_path: Path) -> None:
    model = ScriptedModel([fence("ls")] * 5)
    run = run_adapter("mini-swe-agent", tmp_path, model, task="t", turns=3)
    # mini-swe-agent's own step limit (the item's turns) ends it first: its status says so
    assert run.steps[-1]["exit_status"] == "LimitsExceeded"
    assert len([e for e in run.exchanges if e.completion]) == 3
