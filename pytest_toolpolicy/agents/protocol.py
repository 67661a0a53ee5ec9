"""The agent protocol: what a Python agent is given, and what it must do.

An agent is any object with ``run(task: AgentTask)`` (or a plain callable taking the task): it
works in ``task.workspace`` (its working directory, the repository at the base commit), asks
its model at ``task.base_url`` for at most ``task.max_turns`` completions, and leaves its edits
in the workspace — committed or not, the edit graded is the diff from the base commit. It
returns when it is done; an exception means it ended without finishing (its type and message
are recorded, and what it left is still graded).

``--toolpolicy-current python:MODULE:FACTORY`` names one: ``FACTORY()`` (no arguments) is
called in the sandbox and must return the agent. The module is looked up in the directory the
session started in (visible read-only), then among the installed packages.

What the harness can measure depends on what the agent says it did: each ``task.report(...)``
is one tool call (the tool's name and arguments), attributed to the model call whose reply it
came of (the last call made before it, unless ``call`` names one). An agent that reports
nothing has its tool calls counted as not observable, never as zero.

Standard library only: this module is imported inside the sandbox, by the agent's own
interpreter, where nothing else of the harness is.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class AgentTask:
    instance_id: str
    statement: str  # the issue to resolve, whole
    workspace: Path  # the repository at the base commit: the agent's working directory
    base_url: str  # the bridge: an OpenAI-compatible ``/v1`` endpoint, the agent's only address
    model: str  # the model name to send (the bridge answers with the session's model)
    api_key: str  # a placeholder: the bridge holds the real key and never hands it out
    max_turns: int  # model calls the bridge will answer; the next one is refused
    channel_fd: int | None = None  # where ``report`` writes (the harness's side channel)

    @classmethod
    def from_environment(cls) -> AgentTask:
        """The task as the sandbox describes it (``TOOLPOLICY_*``, ``OPENAI_*``)."""
        env = os.environ
        with open(env["TOOLPOLICY_TASK_FILE"], encoding="utf-8") as handle:
            statement = handle.read()
        fd = env.get("TOOLPOLICY_CHANNEL_FD")
        return cls(
            instance_id=env.get("TOOLPOLICY_INSTANCE", ""),
            statement=statement,
            workspace=Path.cwd(),
            base_url=env["OPENAI_BASE_URL"],
            model=env.get("TOOLPOLICY_MODEL", "toolpolicy-bridge"),
            api_key=env.get("OPENAI_API_KEY", "toolpolicy-bridge"),
            max_turns=int(env.get("TOOLPOLICY_MAX_TURNS") or 30),
            channel_fd=int(fd) if fd else None,
        )

    def report(self, tool: str, args: dict[str, Any], *, call: int | None = None,
               **extra: Any) -> None:  # fmt: skip
        """One tool call the agent made: ``tool`` (``bash``, ``read_file``, ``edit_file``,
        ``submit``, ... mapped as ``gold_labels/FORMAT.md`` maps the stock loop's), its
        ``args``; ``call``: the index of the model call it came of (default: the last one)."""
        if self.channel_fd is None:
            return
        record = {"tool": tool, "args": args, "t": time.time(), **extra}
        if call is not None:
            record["call"] = call
        os.write(self.channel_fd, (json.dumps(record, default=str) + "\n").encode())

    def end(self, status: str, **extra: Any) -> None:
        """How the run ended, in the agent's own words (the runner reports it too)."""
        if self.channel_fd is not None:
            record = {"exit_status": status, **extra}
            os.write(self.channel_fd, (json.dumps(record, default=str) + "\n").encode())

    def openai_client(self) -> Any:
        """An ``openai.OpenAI`` client on the bridge, retries off (a refused call is final)."""
        import openai

        return openai.OpenAI(base_url=self.base_url, api_key=self.api_key, max_retries=0)


@runtime_checkable
class Agent(Protocol):
    def run(self, task: AgentTask) -> object: ...
