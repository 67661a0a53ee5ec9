"""One external agent's run on one item: in the sandbox, its model traffic through the bridge.

The agent is a command (``Launch``) run in the sandbox with the workspace writable and its
working directory, and nothing of the host's environment: no API key (the bridge holds the
session's), a home of its own on the sandbox's private ``/tmp``. Its network namespace holds
only a loopback, where ``forwarder.py`` listens on ``PORT`` and relays to the bridge's Unix
socket: the one address it can reach. It is told its task three ways, so any program can read
it: the file ``/toolpolicy/task.md``, the variable ``TOOLPOLICY_TASK`` (cut at 100,000
characters, the file is whole), and its working directory, the repository at the base commit.

The run ends when the agent exits, when it passes one of the item's limits (the bridge refuses
the call and the sandbox is stopped at once: a ``limit`` outcome, never a hang), or at its wall
time. Whatever the agent left in the workspace is its edit; grading takes it from there.

A Python agent (``python:`` and the shipped adapters) reports its steps — each action it ran
and what it saw — as JSON lines on the sandbox's side channel (``TOOLPOLICY_CHANNEL_FD``), read
here as ``steps``; a command agent's steps are not visible, and its measures say so.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..models.base import Model
from ..primitives.sandbox import Sandbox
from .bridge import Bridge, BridgeLimits, Exchange

PORT = 4000  # in the sandbox's own network namespace: always free
SEEN = "/toolpolicy"  # where the run sees the harness's files (task, forwarder)
TASK_CHARS = 100_000  # of the statement, in the environment variable (the file is whole)
STEPS_BYTES = 4 << 20  # the side channel's cap: a step log past it is cut, and counted
_HERE = Path(__file__).parent


class ExternalAgentError(RuntimeError):
    """The agent cannot be run here; the message says why."""


@dataclass(frozen=True)
class Launch:
    """How to start an agent: ``argv`` in the sandbox, in the workspace."""

    argv: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)  # more variables (never secrets)
    ro_mounts: tuple[tuple[str, str], ...] = ()  # (host path, where the run sees it)
    python: str | None = None  # the interpreter the sandbox must hold (default: the harness's)
    observable: bool = False  # it reports its steps on the side channel


@dataclass(frozen=True)
class ExternalRun:
    exit_code: int | None  # None: stopped (a limit, the wall time) before it exited
    output: str  # what it printed (the tail, when long)
    exchanges: tuple[Exchange, ...]
    stopped: str | None  # the limit or the wall time that ended it
    steps: tuple[dict[str, Any], ...]  # what it reported doing (observable agents)
    steps_error: str | None  # why the step log could not be read whole
    seconds: float
    notes: tuple[str, ...] = ()


def run_external(
    launch: Launch,
    *,
    workspace: Path,
    task: str,
    model: Model,
    limits: BridgeLimits,
    sandbox: Sandbox,
    item: str = "",
    wall_s: float = 1800.0,
    model_name: str = "toolpolicy-bridge",
) -> ExternalRun:
    if sandbox.mode != "bwrap":
        raise ExternalAgentError(
            f"an external agent runs only in bubblewrap's sandbox, and this one is degraded"
            f" ({'; '.join(sandbox.notes) or 'bubblewrap cannot run'}): without it the agent would see"
            " the host's files and network"
        )
    with tempfile.TemporaryDirectory(prefix="toolpolicy-agent-") as tmp:
        root = Path(tmp)
        (root / "bridge").mkdir()
        shutil.copyfile(_HERE / "forwarder.py", root / "forwarder.py")
        (root / "task.md").write_text(task, encoding="utf-8")
        bridge = Bridge(model, limits, item=item, model_name=model_name)
        socket_path = bridge.start_unix(root / "bridge" / "sock")
        try:
            base = f"http://127.0.0.1:{PORT}/v1"
            env = {
                "TOOLPOLICY_TASK": task[:TASK_CHARS],
                "TOOLPOLICY_TASK_FILE": f"{SEEN}/task.md",
                "TOOLPOLICY_MODEL": model_name,
                "TOOLPOLICY_INSTANCE": item,
                "TOOLPOLICY_MAX_TURNS": str(limits.calls or ""),
                # Every name an OpenAI client reads; the key is a placeholder (the bridge
                # holds the session's real one and never hands it out).
                "OPENAI_BASE_URL": base,
                "OPENAI_API_BASE": base,
                "OPENAI_API_KEY": "toolpolicy-bridge",
                **launch.env,
            }
            argv = [sandbox_python(launch), f"{SEEN}/forwarder.py", f"{SEEN}/bridge/sock",
                    str(PORT), "--", *launch.argv]  # fmt: skip
            result = sandbox.run(
                argv,
                cwd=workspace,
                writable=workspace,
                stdin=None,
                timeout=wall_s,
                merge_stderr=True,
                python=sandbox_python(launch),
                env=env,
                ro_mounts=(
                    (str(root / "forwarder.py"), f"{SEEN}/forwarder.py"),
                    (str(root / "task.md"), f"{SEEN}/task.md"),
                    (str(socket_path.parent), f"{SEEN}/bridge"),
                    *launch.ro_mounts,
                ),
                channel=STEPS_BYTES if launch.observable else 0,
                stop=lambda: bridge.stopped,
            )
        finally:
            bridge.close()
    steps, error = _steps(result.channel or b"", result.channel_dropped)
    stopped = bridge.stopped or (f"time: {wall_s:g}s" if result.timed_out else None)
    return ExternalRun(
        exit_code=None if stopped else result.exit_code,
        output=result.stdout.decode("utf-8", errors="replace"),
        exchanges=tuple(bridge.exchanges),
        stopped=stopped,
        steps=steps,
        steps_error=error,
        seconds=result.duration_s,
        notes=result.notes,
    )


def sandbox_python(launch: Launch) -> str:
    return launch.python or sys.executable


def _steps(data: bytes, dropped: int) -> tuple[tuple[dict[str, Any], ...], str | None]:
    steps: list[dict[str, Any]] = []
    for number, line in enumerate(data.splitlines(), 1):
        try:
            step = json.loads(line)
        except ValueError:
            return tuple(steps), f"step {number} is not JSON"
        if not isinstance(step, dict):
            return tuple(steps), f"step {number} is not an object"
        steps.append(step)
    if dropped:
        return tuple(steps), f"the step log went over {STEPS_BYTES} bytes ({dropped} cut)"
    return tuple(steps), None
