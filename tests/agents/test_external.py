"""An external agent in the sandbox: it reaches the bridge and nothing else, holds no secret,
and is stopped at its limits; what it leaves in the workspace is its edit."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_toolpolicy.agents.bridge import BridgeLimits
from pytest_toolpolicy.agents.external import Launch, run_external
from pytest_toolpolicy.primitives.sandbox import Sandbox

from .test_bridge import Stub

SANDBOX = Sandbox.from_env()
pytestmark = pytest.mark.skipif(SANDBOX.mode != "bwrap", reason="needs bubblewrap")

# A command agent of a few lines: the task from its file, one call through the bridge (the
# openai SDK, as a real agent would), the reply written into the workspace.
AGENT = """\
import os, openai
task = open(os.environ["TOOLPOLICY_TASK_FILE"]).read()
client = openai.OpenAI()  # OPENAI_BASE_URL and a placeholder key, from the harness
reply = client.chat.completions.create(model=os.environ["TOOLPOLICY_MODEL"],
                                       messages=[{"role": "user", "content": task}])
open("answer.txt", "w").write(reply.choices[0].message.content)
print("usage", reply.usage.prompt_tokens, reply.usage.completion_tokens)
"""

# Everything a hostile agent would try, each result printed for the test to read.
HOSTILE = """\
import os, socket, subprocess, time, urllib.request
def attempt(name, fn):
    try:
        print(name, "GOT", repr(fn())[:200])
    except Exception as exc:
        print(name, "DENIED", type(exc).__name__)
attempt("home", lambda: os.listdir(os.path.expanduser("~")))
attempt("secret", lambda: os.environ.get("TOOLPOLICY_TEST_SECRET"))
attempt("init-environ", lambda: "TOOLPOLICY_TEST_SECRET" in open("/proc/1/environ").read())
attempt("other-address", lambda: socket.create_connection(("10.1.2.3", 80), timeout=2))
attempt("host-loopback", lambda: urllib.request.urlopen("http://127.0.0.1:1", timeout=2))
kids = []
for _ in range(10000):
    try:
        kids.append(subprocess.Popen(["sleep", "600"]))
    except Exception as exc:
        print("processes", len(kids), "then", type(exc).__name__)
        break
else:
    print("processes", len(kids))
print("hanging", flush=True)
while True:
    time.sleep(1)
"""


def test_a_command_agent_edits_the_workspace_through_the_bridge(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(AGENT)
    model = Stub()
    run = run_external(
        Launch((sys.executable, "agent.py")), workspace=tmp_path, task="Make div exact.",
        model=model, limits=BridgeLimits(), sandbox=SANDBOX, item="x-1", wall_s=60,
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    assert (tmp_path / "answer.txt").read_text() == "reply 1"
    assert "usage 101 7" in run.output  # what the agent saw is the endpoint's own count
    (exchange,) = run.exchanges
    assert exchange.messages == ({"role": "user", "content": "Make div exact."},)
    assert run.stopped is None and run.steps == ()


def test_a_hostile_agent_gets_nothing_out_and_is_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLPOLICY_TEST_SECRET", "sk-live-123")
    (tmp_path / "agent.py").write_text(HOSTILE)
    run = run_external(
        Launch((sys.executable, "agent.py")), workspace=tmp_path, task="t", model=Stub(),
        limits=BridgeLimits(), sandbox=SANDBOX, wall_s=20,
    )  # fmt: skip
    out = run.output
    assert "home GOT []" in out and "secret GOT None" in out and "init-environ GOT False" in out
    assert "other-address DENIED" in out and "host-loopback DENIED" in out
    assert "processes 10000" not in out  # the pids limit held
    assert "hanging" in out and run.stopped == "time: 20s" and run.exit_code is None
    assert "sk-live-123" not in out


def test_an_agent_past_its_limit_is_stopped_at_once(tmp_path: Path) -> None:
    looping = AGENT.replace("reply = client", "while True:\n    reply = client").replace(
        "\nopen(", "\n    open("
    )
    looping = looping.replace(
        "client = openai.OpenAI()", "client = openai.OpenAI(max_retries=50)"
    )  # an agent that retries what it is refused, as litellm does
    (tmp_path / "agent.py").write_text(looping)
    run = run_external(
        Launch((sys.executable, "agent.py")), workspace=tmp_path, task="t", model=Stub(),
        limits=BridgeLimits(calls=2), sandbox=SANDBOX, wall_s=120,
    )  # fmt: skip
    assert run.stopped == "calls: 2 made" and run.exit_code is None
    # stopped by the limit (the refused third call), not by the wall time
    assert len(run.exchanges) >= 3 and len([e for e in run.exchanges if e.completion]) == 2
    assert any("stopped: calls: 2 made" in note for note in run.notes)


def test_the_example_loop_agent_and_its_token_count(tmp_path: Path) -> None:
    """evals/agents/minimal_agent.py, the `cmd:` example: what it was told it used is exactly
    what the bridge recorded from the endpoint."""
    from pytest_toolpolicy.models.scripted import ScriptedModel

    example = Path(__file__).resolve().parents[2] / "evals" / "agents" / "minimal_agent.py"
    model = ScriptedModel([
        {"text": "```bash\necho fixed > NOTE.txt\n```", "usage": {"prompt_tokens": 311, "completion_tokens": 9}},
        {"text": "DONE", "usage": {"prompt_tokens": 340, "completion_tokens": 1}},
    ])  # fmt: skip
    run = run_external(
        Launch((sys.executable, "/toolpolicy/agent.py"), ro_mounts=((str(example), "/toolpolicy/agent.py"),)),
        workspace=tmp_path, task="Write NOTE.txt", model=model, limits=BridgeLimits(),
        sandbox=SANDBOX, wall_s=60,
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    assert (tmp_path / "NOTE.txt").read_text() == "fixed\n"
    served = [e.completion.usage for e in run.exchanges if e.completion]
    told = (sum(u.prompt_tokens for u in served), sum(u.completion_tokens for u in served))
    assert told == (651, 10)
    assert f"tokens the agent was told: prompt {told[0]}, completion {told[1]}" in run.output


def test_a_python_agent_object_runs_in_the_sandbox_and_reports_its_calls(tmp_path: Path) -> None:
    """``python:evals.agents.python_agent:make_agent``: the project's own module, imported in
    the sandbox (the harness's package beside it, read-only), its steps on the side channel."""
    from pytest_toolpolicy.agents.loop import _turns, launch_for
    from pytest_toolpolicy.agents.spec import parse_agent
    from pytest_toolpolicy.models.scripted import ScriptedModel

    project = Path(__file__).resolve().parents[2]
    spec = parse_agent("python:evals.agents.python_agent:make_agent", project=str(project))
    workspace = tmp_path / "repo"
    workspace.mkdir()
    model = ScriptedModel([
        {"text": "```bash\necho fixed > NOTE.txt\n```", "usage": {"prompt_tokens": 50, "completion_tokens": 9}},
        {"text": "DONE", "usage": {"prompt_tokens": 80, "completion_tokens": 1}},
    ])  # fmt: skip
    run = run_external(
        launch_for(spec, max_turns=5), workspace=workspace, task="Write NOTE.txt",
        model=model, limits=BridgeLimits(calls=5), sandbox=SANDBOX, item="x-1", wall_s=60,
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    assert (workspace / "NOTE.txt").read_text() == "fixed\n"
    assert run.steps[-1] == {"exit_status": "finished"}
    turns = _turns(run)
    assert [[c.tool for c in t.executed] for t in turns] == [["bash"], ["submit"]]
    assert turns[0].executed[0].args == {"command": "echo fixed > NOTE.txt"}


def test_a_python_agent_that_raises_ended_without_finishing(tmp_path: Path) -> None:
    from pytest_toolpolicy.agents.loop import _outcome, launch_for
    from pytest_toolpolicy.agents.spec import parse_agent

    project = tmp_path / "project"
    project.mkdir()
    (project / "broken.py").write_text(
        "class Agent:\n    def run(self, task):\n"
        "        import os\n"
        "        shown = sorted(os.listdir(os.environ['TOOLPOLICY_PROJECT']))\n"
        "        open('PARTIAL', 'w').write(task.instance_id + ' ' + ','.join(shown))\n"
        "        raise ValueError('no idea')\n"
    )
    (project / "nothing.py").write_text("make = lambda: 42\n")
    (project / ".env").write_text("OPENAI_API_KEY=sk-live-123\n")
    workspace = tmp_path / "repo"
    workspace.mkdir()
    runs = [
        run_external(
            launch_for(parse_agent(f"python:{target}", project=str(project)), max_turns=3),
            workspace=workspace,
            task="t",
            model=Stub(),
            limits=BridgeLimits(),
            sandbox=SANDBOX,
            item="x-9",
            wall_s=60,
        )  # fmt: skip
        for target in ("broken:Agent", "nothing:make")
    ]
    raised, useless = runs
    assert raised.exit_code == 1 and "ValueError: no idea" in raised.output
    assert raised.steps[-1] == {"exit_status": "ValueError", "error": "no idea"}
    # what it left is still its edit; of the project it saw its own module only, no .env
    assert (workspace / "PARTIAL").read_text() == "x-9 broken.py"
    assert _outcome(raised).detail["reason"] == "the agent ended without finishing: ValueError"
    assert useless.steps[-1]["exit_status"] == "TypeError"
    assert "has no run(task) and is not callable" in useless.steps[-1]["error"]
