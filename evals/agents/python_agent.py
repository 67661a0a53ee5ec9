"""A loop of your own, as a Python agent object: ``python:MODULE:FACTORY``.

    pytest --toolpolicy=ab --toolpolicy-current=python:evals.agents.python_agent:make_agent

``make_agent()`` returns the agent; the harness calls its ``run(task)`` in the sandbox, in the
repository, with ``task`` an ``AgentTask`` (``pytest_toolpolicy.agents.protocol``): the issue,
the bridge's address, the turn budget, and ``report`` for each tool call it makes, which is
what lets the harness score its tool selection (a ``cmd:`` agent's calls are not visible).

It asks for one shell command at a time in a ```bash block, runs it, shows the model what it
printed, and stops when the model says DONE (a ``submit``) or its turns run out.
"""

from __future__ import annotations

import re
import subprocess

from pytest_toolpolicy import AgentTask

SYSTEM = (
    "You fix bugs in the repository in your working directory. Reply with one shell command in a"
    " ```bash block, or with DONE when the fix is made."
)
COMMAND = re.compile(r"```(?:bash|sh)?\s*\n(.*?)```", re.S)


class ShellLoop:
    def __init__(self, max_tokens: int = 256) -> None:
        self.max_tokens = max_tokens

    def run(self, task: AgentTask) -> None:
        client = task.openai_client()
        messages = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": task.statement},
        ]
        for call in range(task.max_turns):
            reply = client.chat.completions.create(
                model=task.model, messages=messages, max_tokens=self.max_tokens
            )
            text = reply.choices[0].message.content or ""
            messages.append({"role": "assistant", "content": text})
            command = COMMAND.search(text)
            if "DONE" in text or command is None:
                task.report("submit", {}, call=call)
                return
            line = command.group(1).strip()
            task.report("bash", {"command": line}, call=call)
            run = subprocess.run(line, shell=True, capture_output=True, text=True, timeout=60)
            shown = f"exit {run.returncode}\n{run.stdout[-2000:]}{run.stderr[-1000:]}"
            messages.append({"role": "user", "content": shown})


def make_agent() -> ShellLoop:
    return ShellLoop()
