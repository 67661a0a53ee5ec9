"""The one run-one-item pipeline: every runner (A/B items, ``toolpolicy run``, fault rates)."""

import json

import pytest

from pytest_toolpolicy.bench.load import load_instances
from pytest_toolpolicy.decide.variants import ItemSpec
from pytest_toolpolicy.models.scripted import ScriptedModel
from pytest_toolpolicy.policy.config import PolicyConfig
from pytest_toolpolicy.run.memo import ExecutionMemo
from pytest_toolpolicy.run.pipeline import RunSetup, run_instance
from pytest_toolpolicy.run.row import row_of

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


def run(instance, tmp_path, replies=REPLIES, **setup):
    model = ScriptedModel([json.dumps(r) for r in replies])
    return run_instance(instance, "policy", model, tmp_path, setup=RunSetup(**setup))


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


def test_the_counterfactual_reruns_score_each_call_and_the_row_reads_the_record(instance, tmp_path):
    """Each call of the resolved run is suppressed in its own rerun. Without the read, the next
    request is the one already answered (nothing new was observed), so the model's recorded
    answer comes back, the fix is never reached and the read was necessary; likewise the fix."""
    model = ScriptedModel([json.dumps(r) for r in REPLIES])
    setup = RunSetup(counterfactual=True, memo=ExecutionMemo(None))
    config = PolicyConfig(max_turns=4)
    result = run_instance(instance, "policy", model, tmp_path, config=config, setup=setup)
    assert result.resolved
    assert result.precision is not None
    assert (result.precision.calls, result.precision.reruns) == (2, 2)
    assert [c["necessary"] for c in result.precision.per_call] == [True, True]
    # every request of the reruns is one the record already answered: nothing is sent again
    assert result.precision.model_calls == 0 and result.precision.model_served > 0
    row = row_of(result.trajectory, ItemSpec(instance.instance_id, "policy"), None, 1.5)
    assert (row["calls"], row["necessary_calls"], row["cf_reruns"]) == (2, 2, 2)
    assert row["resolved"] is True and row["duration_s"] == 1.5
    assert result.trajectory.meta["tools"]["calls"] == result.tools.calls > 0


def test_an_ungraded_run_has_a_trajectory_and_nothing_graded(instance, tmp_path):
    result = run(instance, tmp_path, graded=False)
    assert result.grade is None and result.precision is None and not result.resolved
    assert result.trajectory.meta["grade"] is None
    assert "counterfactual" not in result.trajectory.meta
    assert result.trajectory.outcome.outcome == "stop"


def test_without_reruns_an_unresolved_run_counts_its_calls_and_reruns_none(instance, tmp_path):
    stop = [{"tool": "read_entity", "args": {"selector": SELECTOR}}, REPLIES[-1]]
    result = run(instance, tmp_path, replies=stop, counterfactual=True)
    assert not result.resolved and result.grade is not None
    assert result.precision is not None and result.precision.reruns == 0
    assert result.precision.calls == 1


def test_a_forged_conftest_is_reverted_and_said_so_in_the_row(instance, tmp_path):
    """The baseline arm writes a conftest that marks every report passed and submits: the
    item is unresolved, and its row says what took no part in grading."""
    conftest = (
        "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\n"
        "def pytest_runtest_makereport(item, call):\n"
        "    outcome = yield\n    outcome.get_result().outcome = 'passed'\n"
    )
    replies = [
        {"tool": "write_file", "args": {"path": "conftest.py", "content": conftest}},
        {"tool": "submit", "args": {}},
    ]
    model = ScriptedModel([json.dumps(r) for r in replies])
    result = run_instance(instance, "current", model, tmp_path, setup=RunSetup())
    assert not result.resolved
    row = row_of(result.trajectory, ItemSpec(instance.instance_id, "current"), None, 1.5)
    assert json.loads(row["grade_reverted"]) == [
        "conftest.py: a conftest file configures the test run"
    ]
    assert json.loads(row["grade_flagged"]) == []


def test_a_run_is_handed_its_environment_and_never_builds_one(tmp_path, monkeypatch):
    """A real instance runs in the environment its caller's stage resolved: what could not be
    had is raised where the item meets it, once its workspace is made; none at all is a harness
    fault saying so; the builder is never entered."""
    from pytest_toolpolicy.envs import builder, cache
    from pytest_toolpolicy.envs.spec import EnvironmentSetupError
    from pytest_toolpolicy.envs.stage import Unavailable

    from ..bench.gitmirrors import git, make_mirror, patches, real_instance

    def refuse(*args, **kwargs):
        raise AssertionError("a run entered the environment builder")

    monkeypatch.setattr(cache, "build_environment", refuse)
    monkeypatch.setattr(builder.Builder, "__init__", refuse)
    mirror, base, _ = make_mirror(tmp_path / "mirrors" / "acme__calc", bare=True)
    git(tmp_path, "clone", "-q", str(mirror), str(tmp_path / "scratch"))
    git(tmp_path / "scratch", "checkout", "-q", base)
    real = real_instance("acme/calc", base, *patches(tmp_path / "scratch"))
    model = ScriptedModel([json.dumps(r) for r in REPLIES])
    gone = Unavailable(EnvironmentSetupError("acme__calc-1: environment x failed to build: no"))
    setup = RunSetup(repos=mirror.parent)
    with pytest.raises(EnvironmentSetupError, match="^acme__calc-1: environment x failed"):
        run_instance(real, "policy", model, tmp_path / "a", setup=setup, env=gone, name="repo")
    assert (tmp_path / "a" / "repo" / "calc" / "ops.py").is_file()  # after its workspace
    with pytest.raises(EnvironmentSetupError, match="its environment was not resolved before"):
        run_instance(real, "policy", model, tmp_path / "b", setup=setup, name="repo")
