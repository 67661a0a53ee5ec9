import json

import pytest

from pytest_toolpolicy.ab.arms import run_instance
from pytest_toolpolicy.bench.load import load_instances
from pytest_toolpolicy.models.scripted import ScriptedModel

SELECTOR = "memstore.MemStore.remember"
FIX = {
    "tool": "edit_entity",
    "args": {
        "selector": SELECTOR,
        "search": "        self._make_room()\n",
        "replace": "        if qkey not in self._entries:\n            self._make_room()\n",
    },
}
REPLIES = [
    {"tool": "read_entity", "args": {"selector": SELECTOR}},
    FIX,
    {"tool": "stop", "args": {"reason": "fixed"}},
]


@pytest.fixture(scope="module")
def instance():
    return load_instances("bundled", ids=["bundled__memstore-1"]).instances[0]


def run(instance, tmp_path, **kwargs):
    model = ScriptedModel([json.dumps(r) for r in REPLIES])
    return run_instance(instance, "policy", model, workdir=tmp_path, **kwargs)


def test_visible_tests_let_the_post_patch_trigger_run_the_real_fail_to_pass_tests(
    instance, tmp_path
):
    result = run(instance, tmp_path)
    tests = [o for t in result.trajectory.turns for o in t.observations if o.kind == "test"]
    assert tests and tests[0].result == {"passed": True, "exit_code": 0}
    assert result.resolved and result.trajectory.meta["tests_visible"] is True
    # the agent's patch is its own change only: the visible tests are not part of it
    assert "tests/test_eviction.py" not in result.trajectory.patch
    assert "+        if qkey not in self._entries:" in result.trajectory.patch


def test_hidden_tests_are_not_there_to_run_but_grading_is_the_same(instance, tmp_path):
    result = run(instance, tmp_path, tests_visible=False)
    tests = [o for t in result.trajectory.turns for o in t.observations if o.kind == "test"]
    assert tests[0].result["exit_code"] == 4  # pytest: no such test in the workspace
    assert result.resolved and result.trajectory.meta["tests_visible"] is False
