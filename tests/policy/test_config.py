import pytest

from pytest_toolpolicy.policy.config import GATES, PolicyConfig, default_arm


def test_gate_names_are_the_public_interface():
    assert GATES == (
        "trigger.lint", "trigger.test", "trigger.symbol", "validate.registry", "validate.args",
        "validate.evidence", "noop.affordances", "serialize", "retrieve.top5", "retrieve.embed",
        "trust.exit_code", "trust.schema", "trust.round_trip", "trust.lint",
    )  # fmt: skip


def test_defaults_and_ablation():
    config = PolicyConfig()
    assert all(config.on(g) for g in GATES if g != "retrieve.embed")
    assert not config.on("retrieve.embed")  # spec §4.2: off by default
    variant = config.without("trigger.test")
    assert not variant.on("trigger.test") and config.on("trigger.test")
    assert variant.gates == config.gates - {"trigger.test"}
    with pytest.raises(ValueError, match="unknown gate: trigger.typo"):
        config.without("trigger.typo")


def test_flags_are_read_in_one_place():
    assert PolicyConfig.from_env({"SYMBOL_CAMEL": "1"}).symbol_camel
    assert not PolicyConfig.from_env({}).symbol_camel
    assert PolicyConfig.from_env({"RETRIEVE": "embed"}).on("retrieve.embed")
    with pytest.raises(ValueError, match="RETRIEVE"):
        PolicyConfig.from_env({"RETRIEVE": "bm25"})
    assert default_arm({}) == "current" and default_arm({"TOOL_POLICY": "policy"}) == "policy"
    with pytest.raises(ValueError, match="TOOL_POLICY"):
        default_arm({"TOOL_POLICY": "both"})
