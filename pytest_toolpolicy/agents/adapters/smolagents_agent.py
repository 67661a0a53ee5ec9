"""smolagents as the current arm: a ``CodeAgent`` with one tool, ``bash``, in the workspace.

A Python agent of the protocol (``agents/protocol.py``), run in the sandbox by the runner and
imported there only (the ``[smolagents]`` extra). smolagents' agents write Python; the
``CodeAgent`` is its text mode (its actions are code blocks in the reply, no ``tools`` in the
request, which is what the bridge serves), with markdown fences, which a small model is likelier
to write than smolagents' ``<code>`` tags. Its model is smolagents' ``OpenAIServerModel`` on the
bridge, its retries off (a refused call is final: the harness has stopped the run).

What the harness sees: each ``bash`` command (reported as it runs, with the model call it came
of), each code action that called no tool (``execute``: it ran code), and ``final_answer``
(``submit``: how it says it is done). smolagents' own token and cost accounting is not read.

The harness's side (``launch``) starts it as any Python agent (``python_agent.py``).
"""

from __future__ import annotations

import os
import subprocess
from typing import TYPE_CHECKING, Any

from ..protocol import AgentTask

if TYPE_CHECKING:
    from ..external import Launch
    from ..spec import AgentSpec

NEEDS = "smolagents"  # the [smolagents] extra

BASH_TIMEOUT_S = 120
OBSERVATION_CHARS = 10_000  # of a command's output, shown to the model (the tail)
INSTRUCTIONS = """

You are in the root of the repository this issue is about (the current directory). Use the
`bash` tool to look at the code and to change it; edit files in place. When the issue is
resolved, call `final_answer` with one line saying what you changed."""


def launch(agent: AgentSpec, max_turns: int) -> Launch:
    from .python_agent import runner_launch

    return runner_launch(f"{__name__}:make_agent")


def make_agent() -> SmolagentsAgent:
    return SmolagentsAgent()


class SmolagentsAgent:
    def run(self, task: AgentTask) -> None:
        # Read at import by huggingface_hub (a dependency): never reach for the hub.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from smolagents import ActionStep, CodeAgent, OpenAIServerModel, tool

        class CountingModel(OpenAIServerModel):
            """Counts its calls, so a step names the reply it came of."""

            calls = 0

            def generate(self, *args: Any, **kwargs: Any) -> Any:
                self.calls += 1
                return super().generate(*args, **kwargs)

        model = CountingModel(
            model_id=task.model,
            api_base=task.base_url,
            api_key=task.api_key,
            client_kwargs={"max_retries": 0},
            retry=False,
            temperature=0.0,
        )
        ran: list[int] = []  # the calls whose code ran a tool

        @tool
        def bash(command: str) -> str:
            """Run a shell command in the repository's root and return its exit status and output.

            Args:
                command: the command line, run by bash.
            """
            ran.append(model.calls - 1)
            task.report("bash", {"command": command}, call=model.calls - 1)
            try:
                done = subprocess.run(
                    ["bash", "-c", command],
                    cwd=task.workspace,
                    capture_output=True,
                    text=True,
                    errors="replace",
                    timeout=BASH_TIMEOUT_S,
                )
            except subprocess.TimeoutExpired:
                return f"timed out after {BASH_TIMEOUT_S}s"
            output = (done.stdout + done.stderr)[-OBSERVATION_CHARS:]
            return f"exit {done.returncode}\n{output}"

        def step_done(step: ActionStep, **_: Any) -> None:
            call = model.calls - 1
            if step.is_final_answer:
                task.report("submit", {"answer": str(step.action_output)[:2000]}, call=call)
            elif step.code_action and call not in ran:
                task.report("execute", {"code": step.code_action[:4000]}, call=call)

        agent = CodeAgent(
            tools=[bash],
            model=model,
            max_steps=max(1, task.max_turns - 1),  # its last call writes the final answer
            code_block_tags="markdown",
            verbosity_level=0,
            step_callbacks=[step_done],
        )
        result = agent.run(task.statement + INSTRUCTIONS, return_full_result=True)
        if result.state != "success":
            # smolagents answers anyway at its step limit; the harness says it did not finish
            raise RuntimeError(f"smolagents ended in state {result.state!r}")
