"""``flaky_tool``: the simulator as an unreliable tool wrapper around the real dispatch."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

from pytest_toolpolicy.models.cache import CachedModel
from pytest_toolpolicy.models.sim import ORACLE, SimModel, default_profile
from pytest_toolpolicy.models.sim.tool_faults import FlakyDispatch, wrap_dispatch
from pytest_toolpolicy.models.tool_layer import tool_layer
from pytest_toolpolicy.policy.config import PolicyConfig
from pytest_toolpolicy.policy.trust import trust_gate
from pytest_toolpolicy.types import ToolCall


def run_test_envelope(exit_code: int) -> dict[str, Any]:
    data = {"target": "t", "mode": "none", "passed": exit_code == 0, "exit_code": exit_code}
    data |= {"timed_out": False, "duration_s": 0.5, "output": "1 passed"}
    data |= {"output_truncated": False, "sandbox": "none"}
    return {"ok": True, "error": None, "data": data}


class Tools:
    """A dispatch whose envelopes are fixed objects, so a test can see they are never changed."""

    def __init__(self) -> None:
        self.envelopes = {
            "run_test": run_test_envelope(0),
            "read_entity": {"ok": True, "error": None, "data": {"entity": {}}},
        }
        self.pristine = copy.deepcopy(self.envelopes)

    def __call__(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        return self.envelopes[tool]


def sim(seed: int = 0, **rates: float) -> SimModel:
    return SimModel({}, replace(default_profile(), **rates), seed=seed)


def flips(model: SimModel, item: str, calls: int) -> list[int]:
    """Ordinals of the run_test calls whose envelope came back misreported, in one run."""
    tools = Tools()
    dispatch = wrap_dispatch(model, tools, "policy", item)
    out = []
    for n in range(calls):
        envelope = dispatch("run_test", {"target": "tests/test_a.py"})
        data = envelope["data"]
        if data["passed"] != (data["exit_code"] == 0):
            out.append(n)
    assert tools.envelopes == tools.pristine
    return out


def test_rate_over_many_calls_is_the_configured_rate() -> None:
    model = sim()
    configured = model.profile.flaky_tool
    assert configured > 0
    fired = sum(len(flips(model, f"item{i}", 40)) for i in range(100))
    assert abs(fired / 4000 - configured) <= 0.3 * configured, fired
    assert model.log.rates()["flaky_tool"] == (fired, 4000)


def test_same_seed_same_faults_other_seed_different() -> None:
    first = flips(sim(seed=3), "item", 60)
    assert first
    assert flips(sim(seed=3), "item", 60) == first
    assert flips(sim(seed=4), "item", 60) != first


def test_a_misreported_envelope_is_a_copy_the_trust_gate_flags() -> None:
    tools = Tools()
    dispatch = wrap_dispatch(sim(flaky_tool=1.0), tools, "policy", "item")
    envelope = dispatch("run_test", {"target": "t"})
    assert envelope is not tools.envelopes["run_test"]
    assert tools.envelopes == tools.pristine
    assert envelope["data"] == {**tools.pristine["run_test"]["data"], "passed": False}
    verdict = trust_gate(ToolCall("run_test", {"target": "t"}), envelope, PolicyConfig())
    assert verdict.observation["trust"] == "unverified"
    assert verdict.caveat == "exit_code: passed=false but exit_code=0"
    assert verdict.observation["data"] is envelope


def test_other_tools_and_unsummarized_runs_pass_through() -> None:
    tools = Tools()
    model = sim(flaky_tool=1.0)
    dispatch = wrap_dispatch(model, tools, "policy", "item")
    assert dispatch("read_entity", {"selector": "m.f"}) is tools.envelopes["read_entity"]
    failed = {"ok": False, "error": "no such test", "data": None}
    tools.envelopes["run_test"] = failed
    assert dispatch("run_test", {"target": "nope"}) is failed
    assert "flaky_tool" not in model.log.rates()  # not an opportunity: no summary to misstate


def test_baseline_oracle_and_other_models_get_the_dispatch_itself(tmp_path) -> None:
    tools = Tools()
    assert wrap_dispatch(sim(flaky_tool=1.0), tools, "current", "item") is tools
    assert wrap_dispatch(SimModel({}, ORACLE), tools, "policy", "item") is tools
    assert wrap_dispatch(sim(flaky_tool=0.0), tools, "policy", "item") is tools
    # any other model plays no tool layer; a wrapper (the cache) passes the question on
    assert tool_layer(object(), tools, arm="policy", item="item", workspace=None) is tools
    cached = CachedModel(sim(flaky_tool=1.0), tmp_path / "c.sqlite", "record")
    layered = tool_layer(cached, tools, arm="policy", item="item", workspace=None)
    assert isinstance(layered, FlakyDispatch)
