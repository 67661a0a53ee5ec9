"""The one registry of arms: every arm is named once, its class says before one is built what
the pipeline must know of it, and each external agent's adapter launches it from its own file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pytest_toolpolicy.agents.external import SEEN
from pytest_toolpolicy.agents.loop import ExternalLoop
from pytest_toolpolicy.agents.spec import AgentSpec
from pytest_toolpolicy.arm_registry import ARMS, adapter, adapters, arm_kind
from pytest_toolpolicy.current.loop import CurrentLoop
from pytest_toolpolicy.policy.loop import PolicyLoop


def test_every_arm_is_named_once_and_says_what_the_pipeline_must_know() -> None:
    assert list(ARMS) == ["policy", "builtin", "cmd", "python", "mini-swe-agent", "smolagents"]
    assert list(adapters()) == ["cmd", "python", "mini-swe-agent", "smolagents"]
    kinds = {name: arm_kind(name) for name in ARMS}
    assert kinds == {
        "policy": PolicyLoop,
        "builtin": CurrentLoop,
        **dict.fromkeys(adapters(), ExternalLoop),
    }
    removable = [name for name, kind in kinds.items() if kind.calls_removable]
    assert removable == ["policy", "builtin"]
    assert [name for name, kind in kinds.items() if kind.own_requests] == list(adapters())


def test_a_name_the_registry_lacks_is_refused_naming_what_it_has() -> None:
    with pytest.raises(KeyError, match="no arm 'aider': the registry has policy, builtin, cmd"):
        arm_kind("aider")
    with pytest.raises(KeyError, match="no agent adapter 'builtin': the registry has cmd,"):
        adapter("builtin")  # the stock loop is an arm, not an external agent


def test_each_adapter_launches_its_agent_from_its_own_file(tmp_path: Path) -> None:
    (tmp_path / "my_agent.py").write_text("")
    (tmp_path / ".env").write_text("SECRET=1\n")
    command = adapter("cmd").launch(AgentSpec("cmd", "echo hi", str(tmp_path)), 5)
    assert command.argv == ("/bin/sh", "-c", "echo hi") and not command.observable
    assert command.ro_mounts == ((str(tmp_path), f"{SEEN}/project"),)
    python = adapter("python").launch(AgentSpec("python", "my_agent:make", str(tmp_path)), 5)
    assert python.argv[1:] == (f"{SEEN}/runner.py", "my_agent:make") and python.observable
    # of the project, only the agent's own module is shown (never its .env)
    assert [seen for _, seen in python.ro_mounts if seen.startswith(f"{SEEN}/project")] == [
        f"{SEEN}/project/my_agent.py"
    ]
    mini = adapter("mini-swe-agent").launch(AgentSpec("mini-swe-agent"), 7)
    assert mini.argv[1:] == (f"{SEEN}/adapter.py", "7")
    assert Path(mini.ro_mounts[0][0]).name == "mini_swe_agent.py"
    smol = adapter("smolagents").launch(AgentSpec("smolagents"), 7)
    assert smol.argv[2] == "pytest_toolpolicy.agents.adapters.smolagents_agent:make_agent"


def test_loading_every_adapter_runs_nothing_of_its_agent() -> None:
    """The harness imports an adapter to read its name, needs and launch: mini-swe-agent's own
    settings and modules stay the sandbox's."""
    probe = (
        "import os, sys\n"
        "from pytest_toolpolicy.arm_registry import adapter, adapters\n"
        "for name in adapters(): adapter(name)\n"
        "heavy = ('minisweagent', 'litellm', 'smolagents', 'openai')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy),"
        " sorted(k for k in os.environ if k.startswith(('MSWEA_', 'LITELLM_'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60,
        env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert done.stdout.strip() == "[] []"
