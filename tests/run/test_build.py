"""Which arm plays each side of the A/B, built from the registry: the policy side is always the
policy loop; the current side is the session's agent, the stock loop unless one is named."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_toolpolicy.agents.loop import ExternalLoop
from pytest_toolpolicy.agents.spec import AgentSpec
from pytest_toolpolicy.current.loop import CurrentLoop
from pytest_toolpolicy.models.scripted import ScriptedModel
from pytest_toolpolicy.policy.config import PolicyConfig
from pytest_toolpolicy.policy.loop import PolicyLoop
from pytest_toolpolicy.primitives import Toolbox
from pytest_toolpolicy.run.build import build_loop, kind_of, player
from pytest_toolpolicy.run.dispatch import default_dispatch

CMD = AgentSpec("cmd", "python agent.py")


def test_who_plays_each_side() -> None:
    assert [player("policy"), player("policy", CMD)] == ["policy", "policy"]
    assert [player("current"), player("current", CMD)] == ["builtin", "cmd"]
    assert kind_of("current", CMD) is ExternalLoop and kind_of("current") is CurrentLoop
    with pytest.raises(ValueError, match="arm must be one of policy, current, got 'mini'"):
        player("mini")


def test_each_built_in_loop_is_built_with_the_setup_and_its_own_tools(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("x = 1\n")
    box = Toolbox(tmp_path)
    config = PolicyConfig(max_turns=4, max_cost_usd=0.5)
    policy = build_loop("policy", box, ScriptedModel([]), config, variant="policy-no:x")
    current = build_loop("current", box, ScriptedModel([]), config)
    assert isinstance(policy, PolicyLoop) and policy.variant == "policy-no:x"
    assert policy.config is config and policy.dispatch == box.call
    assert isinstance(current, CurrentLoop) and current.variant == "current"
    assert (current.max_turns, current.max_cost_usd) == (4, 0.5)
    # the stock loop's four tools, the policy loop's six primitives
    assert default_dispatch("current", box)("read_file", {"path": "m.py"})["ok"]
    assert not default_dispatch("policy", box)("read_file", {"path": "m.py"})["ok"]
