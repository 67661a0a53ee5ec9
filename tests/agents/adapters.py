"""What the adapter tests share: the marks that skip them where they cannot run, and one run of
an adapter in the sandbox against a scripted model through the bridge."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from pytest_toolpolicy.agents.bridge import BridgeLimits
from pytest_toolpolicy.agents.external import ExternalRun, run_external
from pytest_toolpolicy.agents.loop import launch_for
from pytest_toolpolicy.agents.spec import AgentSpec
from pytest_toolpolicy.models.scripted import ScriptedModel
from pytest_toolpolicy.primitives.sandbox import Sandbox

SANDBOX = Sandbox.from_env()


def marks(module: str, extra: str) -> list[pytest.MarkDecorator]:
    return [
        pytest.mark.skipif(
            SANDBOX.mode != "bwrap", reason="an external agent runs only in the sandbox"
        ),
        pytest.mark.skipif(
            importlib.util.find_spec(module) is None,
            reason=f"the [{extra}] extra is not installed (make test installs it)",
        ),
    ]


def run_adapter(
    agent: str, workspace: Path, model: ScriptedModel, *, task: str, turns: int, item: str = ""
) -> ExternalRun:
    """``agent`` with ``turns`` turns and as many model calls, 300 s of wall time."""
    return run_external(
        launch_for(AgentSpec(agent), turns), workspace=workspace, task=task, model=model,
        limits=BridgeLimits(calls=turns), sandbox=SANDBOX, item=item, wall_s=300,
    )  # fmt: skip
