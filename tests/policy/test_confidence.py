"""Row 9's confidence trigger: the features of a reply's logprobs, the threshold's verdict, and a
policy run in which it withholds a call it judges not necessary (and says so in the ledger)."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from pytest_toolpolicy.demo import EXAMPLE
from pytest_toolpolicy.models.scripted import ScriptedModel
from pytest_toolpolicy.policy.confidence import ConfidenceTrigger, confidence
from pytest_toolpolicy.policy.config import PolicyConfig
from pytest_toolpolicy.policy.loop import PolicyLoop, Task
from pytest_toolpolicy.primitives import Toolbox, Workspace


def tokens(*chosen: float) -> list[dict]:
    """Logprobs as an endpoint records them: each chosen token and two alternatives."""
    return [{"token": "t", "logprob": lp, "top": [["t", lp], ["u", lp - 1.0]]} for lp in chosen]


def test_features_of_the_first_tokens() -> None:
    got = confidence({"extra": {"logprobs": tokens(-0.5, -1.5, *[0.0] * 10)}})
    assert got["lp_mean"] == pytest.approx(-2.0 / 8)  # the first 8 tokens only
    assert got["lp_min"] == -1.5
    two = -(1 / (1 + math.e**-1)) * math.log(1 / (1 + math.e**-1)) - (
        math.e**-1 / (1 + math.e**-1)
    ) * math.log(math.e**-1 / (1 + math.e**-1))
    assert got["entropy"] == pytest.approx(two)  # each token: two alternatives, 1 nat apart
    assert all(math.isnan(v) for v in confidence({"extra": {}}).values())
    junk = {"extra": {"logprobs": [{"token": "x"}, "no", {"logprob": True}]}}
    assert all(math.isnan(v) for v in confidence(junk).values())  # nothing well-formed


def test_the_trigger_judges_by_its_threshold_and_never_without_logprobs() -> None:
    trigger = ConfidenceTrigger("lp_mean", -1.0, "below")
    assert trigger.necessary(-2.0) is True and trigger.necessary(-0.5) is False
    assert trigger.necessary(math.nan) is None
    assert trigger.withhold({"extra": {}}) is None  # no logprobs: the call runs
    why = trigger.withhold({"extra": {"logprobs": tokens(-0.1, -0.1)}})
    assert why is not None and "lp_mean -0.100 is above tau -1.000" in why
    with pytest.raises(ValueError, match="feature must be one of"):
        ConfidenceTrigger("perplexity", 1.0)
    with pytest.raises(ValueError, match="necessary_when"):
        ConfidenceTrigger("lp_mean", 1.0, "sideways")


def test_a_policy_run_with_the_trigger_withholds_a_confident_call(tmp_path: Path) -> None:
    root = tmp_path / "memstore"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("__pycache__"))
    box = Toolbox(root, workspace=Workspace.create(root),
                  sandbox_env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})  # fmt: skip
    read = {"tool": "read_entity", "args": {"selector": "memstore.store.MemStore.recall"}}
    stop = {"tool": "stop", "args": {"reason": "done"}}
    replies = [
        {"text": json.dumps(read), "logprobs": tokens(-0.05, -0.05)},  # sure of itself: withheld
        {"text": json.dumps(read), "logprobs": tokens(-3.0, -2.0)},  # unsure: it runs
        {"text": json.dumps(stop)},
    ]
    config = PolicyConfig(trigger=ConfidenceTrigger("lp_mean", -1.0, "below"))
    trajectory = PolicyLoop(box, ScriptedModel(replies), config).run(
        Task("memstore-1", "recall returns expired values", None)
    )
    first, second, _ = trajectory.turns
    assert first.executed == () and [c.tool for c in first.suppressed] == ["read_entity"]
    (withheld,) = [o for o in first.observations if o.kind == "withheld"]
    assert withheld.source == "harness" and "judged not necessary" in withheld.result
    assert "withheld" in second.prompt[-1]["content"]  # the model is shown why
    assert [c.tool for c in second.executed] == ["read_entity"] and second.suppressed == ()
