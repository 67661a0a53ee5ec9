"""Row 10's probe as a policy stage: a logit over the prompt's hidden state, a call withheld
where it says not necessary, nothing judged where there is no state."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_toolpolicy.demo import EXAMPLE
from pytest_toolpolicy.models.scripted import ScriptedModel
from pytest_toolpolicy.policy.config import PolicyConfig
from pytest_toolpolicy.policy.hidden import states_for
from pytest_toolpolicy.policy.loop import PolicyLoop, Task
from pytest_toolpolicy.policy.probe import LinearProbe, prompt_text
from pytest_toolpolicy.primitives import Toolbox, Workspace

PROBE = LinearProbe(weights=(2.0, 0.0), bias=-1.0, mean=(0.0, 0.0), std=(1.0, 1.0))


def test_the_logit_and_its_verdict() -> None:
    assert PROBE.logit([1.0, 5.0]) == 1.0
    assert PROBE.withhold([1.0, 0.0]) is None  # logit 1 > 0: necessary, it runs
    why = PROBE.withhold([0.0, 0.0])
    assert why is not None and "logit -1.000 is not above 0.000" in why
    assert PROBE.withhold(None) is None  # no state: nothing judged
    with pytest.raises(ValueError, match="a state of 3 numbers for a probe of 2"):
        PROBE.logit([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="as long as each other"):
        LinearProbe((1.0,), 0.0, (0.0, 0.0), (1.0, 1.0))
    with pytest.raises(ValueError, match="std must be positive"):
        LinearProbe((1.0,), 0.0, (0.0,), (0.0,))


def test_a_probe_file_round_trips_and_a_bad_one_says_why(tmp_path: Path) -> None:
    path = tmp_path / "probe.json"
    path.write_text(json.dumps(PROBE.to_dict()))
    loaded = LinearProbe.load(path)
    assert loaded.weights == PROBE.weights and loaded.source == str(path)
    path.write_text('{"weights": [1.0]}')
    with pytest.raises(ValueError, match="not a probe"):
        LinearProbe.load(path)
    with pytest.raises(ValueError, match="nowhere.json"):
        LinearProbe.load(tmp_path / "nowhere.json")


def test_a_policy_run_with_the_probe_withholds_where_the_state_says_so(tmp_path: Path) -> None:
    root = tmp_path / "memstore"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("__pycache__"))
    box = Toolbox(root, workspace=Workspace.create(root),
                  sandbox_env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})  # fmt: skip
    read = json.dumps(
        {"tool": "read_entity", "args": {"selector": "memstore.store.MemStore.recall"}}
    )
    stop = json.dumps({"tool": "stop", "args": {"reason": "done"}})
    seen: list[str] = []

    def states(messages):  # type: ignore[no-untyped-def]
        seen.append(prompt_text(messages))
        return [0.0, 0.0] if len(seen) == 1 else [1.0, 0.0]  # first: not necessary

    loop = PolicyLoop(box, ScriptedModel([read, read, stop]), PolicyConfig(probe=PROBE),
                      states=states)  # fmt: skip
    first, second, _ = loop.run(Task("memstore-1", "recall returns expired values", None)).turns
    assert first.executed == () and [o.kind for o in first.observations][-1] == "withheld"
    assert [c.tool for c in second.executed] == ["read_entity"]
    assert seen[0].startswith("system: ") and "recall returns expired values" in seen[0]


def test_no_local_model_no_state() -> None:
    assert states_for("openai:gpt-4o-mini")([{"role": "user", "content": "x"}]) is None
    assert states_for("sim")([]) is None
