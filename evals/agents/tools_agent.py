"""A Python agent that calls the model with ``tools`` (function calling), as most current agents
do: ``python:evals.agents.tools_agent:make_agent``.

    pytest --toolpolicy=ab --toolpolicy-model=local:qwen2.5-coder-1.5b \\
        --toolpolicy-current=python:evals.agents.tools_agent:make_agent

It offers the model three functions (``bash``, ``read_file``, ``write_file``) and a ``submit``,
runs each call the model makes, answers it with a ``tool`` message, and stops at ``submit``, a
reply with no call, or its turn budget. It reports nothing itself: the bridge reports each call
the model made as one of its steps. A model that writes its call as JSON text instead of a
``tool_calls`` entry (small models do) is answered once with how to call, then taken as done.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from pytest_toolpolicy import AgentTask

SYSTEM = (
    "You fix the issue in the Python repository in your working directory. Use the functions:"
    " read the code, edit it with write_file, run the tests with bash, then call submit."
)


def _function(name: str, description: str, **args: str) -> dict[str, Any]:
    properties = {arg: {"type": "string", "description": text} for arg, text in args.items()}
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": list(args)},
        },
    }


TOOLS = [
    _function("bash", "Run a shell command at the repository root.", command="the command"),
    _function("read_file", "Read a file.", path="its path from the repository root"),
    _function(
        "write_file", "Replace a file's whole content.", path="its path", content="the new text"
    ),
    _function("submit", "Say the fix is done.", message="what you changed"),
]


def run_call(name: str, args: dict[str, Any]) -> str:
    """One call's result, as the model reads it; a bad call is an error it can correct."""
    try:
        if name == "bash":
            done = subprocess.run(
                str(args["command"]), shell=True, capture_output=True, text=True, timeout=120
            )
            return f"exit {done.returncode}\n{(done.stdout + done.stderr)[-3000:]}"
        if name == "read_file":
            return Path(str(args["path"])).read_text(encoding="utf-8", errors="replace")[:6000]
        if name == "write_file":
            Path(str(args["path"])).write_text(str(args["content"]), encoding="utf-8")
            return "written"
    except (KeyError, OSError, subprocess.TimeoutExpired) as exc:
        return f"error: {type(exc).__name__}: {exc}"
    return f"error: unknown function {name!r}"


class ToolsLoop:
    def __init__(self, max_tokens: int = 1024) -> None:
        self.max_tokens = max_tokens

    def run(self, task: AgentTask) -> None:
        client = task.openai_client()
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": task.statement},
        ]
        nudged = False
        for _ in range(task.max_turns):
            reply = client.chat.completions.create(
                model=task.model,
                messages=messages,  # type: ignore[arg-type]
                tools=TOOLS,  # type: ignore[arg-type]
                max_tokens=self.max_tokens,
            )
            message = reply.choices[0].message
            calls = message.tool_calls or []
            messages.append(message.model_dump(exclude_none=True))
            if not calls:
                if nudged:
                    return
                nudged = True
                messages.append({"role": "user", "content": "Call one of the functions."})
                continue
            for call in calls:
                name = call.function.name  # type: ignore[union-attr]
                if name == "submit":
                    return
                try:
                    args = json.loads(call.function.arguments or "{}")  # type: ignore[union-attr]
                except ValueError:
                    args = {}
                result = run_call(name, args if isinstance(args, dict) else {})
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})


def make_agent() -> ToolsLoop:
    return ToolsLoop()
