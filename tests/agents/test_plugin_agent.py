"""Your own agent as the current arm, end to end as a user runs it: ``--toolpolicy-current
cmd:...`` with a program of the project's own, its model calls through the bridge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_toolpolicy.primitives.sandbox import Sandbox

pytestmark = pytest.mark.skipif(
    Sandbox.from_env().mode != "bwrap", reason="an external agent runs only in the sandbox"
)

AGENT = """\
import os, openai
task = open(os.environ["TOOLPOLICY_TASK_FILE"]).read()
reply = openai.OpenAI().chat.completions.create(
    model=os.environ["TOOLPOLICY_MODEL"], messages=[{"role": "user", "content": task}])
open("AGENT_WAS_HERE", "w").write(reply.choices[0].message.content)
"""
STOP = {"text": json.dumps({"tool": "stop", "args": {"reason": "nothing to do"}}),
        "usage": {"prompt_tokens": 123, "completion_tokens": 45}}  # fmt: skip


def test_a_command_agent_plays_the_current_arm(pytester: pytest.Pytester) -> None:
    pytester.makefile(".py", my_agent=AGENT)
    script = pytester.path / "replies.jsonl"
    script.write_text("\n".join(json.dumps(STOP) for _ in range(4)) + "\n")
    report = pytester.path / "report"
    result = pytester.runpytest_subprocess(
        "--toolpolicy=ab", f"--toolpolicy-model=scripted:{script}", "--toolpolicy-sample=1",
        "--toolpolicy-current=cmd:python $TOOLPOLICY_PROJECT/my_agent.py",
        f"--toolpolicy-report={report}", "--toolpolicy-no-view", "-p", "no:cacheprovider",
    )  # fmt: skip
    result.assert_outcomes(passed=2)
    rows = [json.loads(line) for line in (report / "trajectories.jsonl").read_text().splitlines()]
    (current,) = [r for r in rows if r["arm"] == "current"]
    meta = current["meta"]
    assert meta["agent"] == "cmd:python $TOOLPOLICY_PROJECT/my_agent.py"
    assert meta["agent_exit"] == 0 and meta["calls_observable"] is False
    (turn,) = current["turns"]  # one model call, its usage the endpoint's (the script's) own
    assert turn["completion"]["usage"]["prompt_tokens"] == 123
    assert "+" in current["patch"] and "AGENT_WAS_HERE" in current["patch"]
    out = result.stdout.str()
    assert "does not show its tool calls to the harness" in out
    (row,) = [line for line in out.splitlines() if line.startswith("current ")]
    assert row.count("not observable") == 2  # call precision and selection accuracy, never 0/1


# An agent that gets one reply, then sends what no endpoint takes, and crashes on the refusal.
BAD_REQUEST = """\
import os, openai
client = openai.OpenAI(max_retries=0)
model = os.environ["TOOLPOLICY_MODEL"]
client.chat.completions.create(model=model, messages=[{"role": "user", "content": "hi"}])
client.chat.completions.create(model=model, messages=[{"role": "user", "content": "hi"}],
                               temperature=5)
"""


def test_an_agent_that_ends_on_its_own_bad_request_is_measured_unresolved(
    pytester: pytest.Pytester,
) -> None:
    """A refused request is the agent's own failure: its item is measured (not resolved), its
    instance stays in both arms, and the refusal is one of its turns, said by name."""
    pytester.makefile(".py", bad_agent=BAD_REQUEST)
    script = pytester.path / "replies.jsonl"
    script.write_text("\n".join(json.dumps(STOP) for _ in range(4)) + "\n")
    report = pytester.path / "report"
    result = pytester.runpytest_subprocess(
        "--toolpolicy=ab", f"--toolpolicy-model=scripted:{script}", "--toolpolicy-sample=1",
        "--toolpolicy-current=cmd:python $TOOLPOLICY_PROJECT/bad_agent.py",
        f"--toolpolicy-report={report}", "--toolpolicy-no-view", "-p", "no:cacheprovider",
    )  # fmt: skip
    result.assert_outcomes(passed=2)
    rows = [json.loads(line) for line in (report / "trajectories.jsonl").read_text().splitlines()]
    (current,) = [r for r in rows if r["arm"] == "current"]
    refusal = "invalid temperature: 5 (expected a number 0..2)"
    assert current["outcome"]["outcome"] == "budget_exhausted"
    assert current["outcome"]["detail"]["reason"].endswith(
        f"its last request was refused: {refusal}"
    )
    assert [t["completion"].get("error") for t in current["turns"]] == [None, refusal]
    assert current["meta"]["agent_refused"] == 1
    import pandas as pd

    results = pd.read_parquet(report / "results.parquet")
    assert sorted(results["status"]) == ["ok", "ok"]  # both arms measure the instance
    row = results[results["arm"] == "current"].iloc[0]
    assert (bool(row["resolved"]), row["turns"], row["cost_usd"]) == (False, 2, 0.0)
    out = result.stdout.str()
    (line,) = [line for line in out.splitlines() if line.startswith("current ")]
    assert "0.000 (0/1)" in line  # measured: 0 of 1 resolved, not left out


def test_a_bad_agent_spec_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--toolpolicy=ab", "--toolpolicy-current=aider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--toolpolicy-current: unknown agent 'aider'*"])


def test_an_agent_that_never_exits_is_stopped_and_its_neighbours_lose_nothing(
    pytester: pytest.Pytester,
) -> None:
    pytester.makefile(
        ".py", hang="import time\nopen('HALF_DONE', 'w').write('x')\ntime.sleep(3600)\n"
    )
    script = pytester.path / "replies.jsonl"
    script.write_text("\n".join(json.dumps(STOP) for _ in range(4)) + "\n")
    report = pytester.path / "report"
    result = pytester.runpytest_subprocess(
        "--toolpolicy=ab", f"--toolpolicy-model=scripted:{script}", "--toolpolicy-sample=2",
        "--toolpolicy-current=cmd:python $TOOLPOLICY_PROJECT/hang.py",
        "--toolpolicy-agent-timeout=3", f"--toolpolicy-report={report}", "--toolpolicy-no-view",
        "-p", "no:cacheprovider",
    )  # fmt: skip
    result.assert_outcomes(passed=4)  # every item measured: the hanging ones too
    rows = [json.loads(line) for line in (report / "trajectories.jsonl").read_text().splitlines()]
    hung = [r for r in rows if r["arm"] == "current"]
    assert len(hung) == 2
    for row in hung:
        assert row["outcome"]["outcome"] == "budget_exhausted"
        assert row["outcome"]["detail"] == {"reason": "limit: time: 3s", "limit": "time: 3s"}
        assert "HALF_DONE" in row["patch"]  # what it left is graded
    assert [r["outcome"]["outcome"] for r in rows if r["arm"] == "policy"] == ["stop", "stop"]
    out = result.stdout.str()
    assert (
        "selection_accuracy not judged: cmd:python $TOOLPOLICY_PROJECT/hang.py does not show" in out
    )


PY_AGENT = """\
from pytest_toolpolicy.agents.protocol import AgentTask

class Once:
    def run(self, task: AgentTask) -> None:
        reply = task.openai_client().chat.completions.create(
            model=task.model, messages=[{"role": "user", "content": task.statement}])
        task.report("bash", {"command": "grep -rn div ."})
        open("PY_AGENT_WAS_HERE", "w").write(reply.choices[0].message.content)

def make_agent():
    return Once()
"""


def test_a_candidates_file_names_a_python_agent_as_the_competitor(
    pytester: pytest.Pytester,
) -> None:
    pytester.makefile(".py", my_agent=PY_AGENT)
    pytester.makefile(
        ".toml",
        cands='current = "python:my_agent:make_agent"\n\n[candidate.lean]\n'
        'gates_off = ["trust.round_trip"]\n',
    )
    script = pytester.path / "replies.jsonl"
    script.write_text("\n".join(json.dumps(STOP) for _ in range(6)) + "\n")
    report = pytester.path / "report"
    result = pytester.runpytest_subprocess(
        "--toolpolicy=ab", f"--toolpolicy-model=scripted:{script}", "--toolpolicy-sample=1",
        "--toolpolicy-candidates=cands.toml", f"--toolpolicy-report={report}",
        "--toolpolicy-no-view", "-p", "no:cacheprovider",
    )  # fmt: skip
    result.assert_outcomes(passed=3)  # current, policy, cand:lean
    rows = [json.loads(line) for line in (report / "trajectories.jsonl").read_text().splitlines()]
    (current,) = [r for r in rows if r["arm"] == "current"]
    meta = current["meta"]
    assert meta["agent"] == "python:my_agent:make_agent" and meta["calls_observable"] is True
    assert meta["agent_status"] == {"exit_status": "finished"}
    (turn,) = current["turns"]
    assert turn["executed"] == [{"tool": "bash", "args": {"command": "grep -rn div ."}}]
    assert "PY_AGENT_WAS_HERE" in current["patch"]
    (row,) = [line for line in result.stdout.str().splitlines() if line.startswith("current ")]
    assert row.count("not observable") == 1  # call precision only: its selection is scored

    clash = pytester.runpytest_subprocess(
        "--toolpolicy=ab", "--toolpolicy-candidates=cands.toml", "--toolpolicy-current=builtin"
    )
    assert clash.ret == pytest.ExitCode.USAGE_ERROR
    clash.stderr.fnmatch_lines(["*name different agents: give one*"])


def _call(id_: str, name: str, **args: str) -> dict[str, object]:
    function = {"name": name, "arguments": json.dumps(args)}
    return {"id": id_, "type": "function", "function": function}


def test_an_agent_that_calls_the_model_with_tools_plays_the_current_arm(
    pytester: pytest.Pytester,
) -> None:
    """``evals/agents/tools_agent.py`` offers functions; the model's calls come back through the
    bridge, the agent runs them, and each is one of its steps, with the endpoint's usage."""
    example = Path(__file__).parents[2] / "evals" / "agents" / "tools_agent.py"
    pytester.makefile(".py", tools_agent=example.read_text(encoding="utf-8"))
    write = _call("c1", "write_file", path="TOOLS_AGENT_WAS_HERE", content="hi\n")
    replies = [
        {"text": "", "tool_calls": [write], "usage": {"prompt_tokens": 321, "completion_tokens": 17}},
        {"text": "", "tool_calls": [_call("c2", "submit", message="done")],
         "usage": {"prompt_tokens": 350, "completion_tokens": 9}},
    ]  # fmt: skip
    script = pytester.path / "replies.jsonl"
    script.write_text("\n".join(json.dumps(r) for r in replies) + "\n")
    report = pytester.path / "report"
    result = pytester.runpytest_subprocess(
        "--toolpolicy=current", f"--toolpolicy-model=scripted:{script}", "--toolpolicy-sample=1",
        "--toolpolicy-current=python:tools_agent:make_agent",
        f"--toolpolicy-report={report}", "--toolpolicy-no-view", "-p", "no:cacheprovider",
    )  # fmt: skip
    result.assert_outcomes(passed=1)
    (current,) = [
        json.loads(line) for line in (report / "trajectories.jsonl").read_text().splitlines()
    ]
    first, second = current["turns"]
    assert first["executed"] == [
        {"tool": "write_file", "args": {"path": "TOOLS_AGENT_WAS_HERE", "content": "hi\n"}}
    ]
    assert second["executed"] == [{"tool": "submit", "args": {"message": "done"}}]
    assert [t["completion"]["usage"]["prompt_tokens"] for t in current["turns"]] == [321, 350]
    # the tool's result went back as a tool message answering the call's id
    assert {"role": "tool", "content": "written", "tool_call_id": "c1"} in second["prompt"]
    assert "TOOLS_AGENT_WAS_HERE" in current["patch"]
