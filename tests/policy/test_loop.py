import json
import shutil
from pathlib import Path

import pytest

from pytest_toolpolicy.demo import EXAMPLE
from pytest_toolpolicy.models.scripted import ScriptedModel
from pytest_toolpolicy.policy.config import PolicyConfig
from pytest_toolpolicy.policy.loop import PolicyLoop, Task
from pytest_toolpolicy.primitives import Toolbox, Workspace
from pytest_toolpolicy.types import load_trajectories

RECALL = "memstore.store.MemStore.recall"
READ = {"tool": "read_entity", "args": {"selector": RECALL, "body": True}}
FIX = {
    "tool": "edit_entity",
    "args": {
        "selector": RECALL,
        "search": "self._clock() > expires",
        "replace": "self._clock() >= expires",
    },
}
STOP = {"tool": "stop", "args": {"reason": "fixed the boundary"}}
TARGET = "tests/test_store.py::test_expired_value_is_gone"
ISSUE = "A value stored with ttl=10 is still returned by recall at exactly t=10; it should expire."
# The sandboxed pytest runs (the post-patch test trigger, run_test) without this venv's other
# pytest plugins, as the A/B's own toolbox for a bundled project (ab/arms.py): the project needs
# none, and loading them costs ~2.4 s a run in the sandbox (PYTHONDONTWRITEBYTECODE=1 there, so
# pytest assertion-rewrites hypothesis, anyio and xdist again each time).
NO_PLUGINS = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


@pytest.fixture
def box(tmp_path: Path) -> Toolbox:
    root = tmp_path / "memstore"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("__pycache__"))
    return Toolbox(root, workspace=Workspace.create(root), sandbox_env=NO_PLUGINS)


def run(box, replies, config=None, issue=ISSUE, target=TARGET):
    model = ScriptedModel([r if isinstance(r, str) else json.dumps(r) for r in replies])
    return PolicyLoop(box, model, config or PolicyConfig()).run(Task("memstore-1", issue, target))


def kinds(turn):
    return [o.kind for o in turn.observations]


def test_read_fix_stop_fires_lint_and_the_post_patch_test_before_halting(box):
    traj = run(box, [READ, FIX, STOP])
    assert traj.outcome.record() == {"outcome": "stop", "reason": "fixed the boundary"}
    assert [kinds(t) for t in traj.turns] == [["read_entity"], ["edit_entity", "lint"], ["test"]]
    lint = traj.turns[1].observations[1].data
    assert lint == {"kind": "lint", "target": RECALL, "result": "clean"}
    test = traj.turns[2].observations[0]
    assert test.source == "trigger" and test.result == {"passed": True, "exit_code": 0}
    assert "+        if expires is not None and self._clock() >= expires:" in traj.patch
    assert traj.turns[0].completion["usage"]["prompt_tokens"] == 0  # scripted: free, no tokens


def test_symbol_in_the_issue_fires_a_symbol_search_that_counts_as_evidence(box):
    issue = "memstore.MemStore.recall returns expired values at the boundary."
    traj = run(box, [FIX, STOP], issue=issue)
    first = traj.turns[0]
    assert kinds(first)[:2] == ["symbol", "edit_entity"]
    assert first.observations[0].data["query"] == "memstore.MemStore.recall"
    assert first.rejections == ()  # the symbol match cited the selector: the edit had evidence
    assert traj.turns[0].observations[1].result == "committed"


def test_edit_without_evidence_is_rejected_then_reselected_on_the_same_turn(box):
    traj = run(box, [FIX, READ, FIX, STOP])
    first = traj.turns[0]
    assert [r.reason for r in first.rejections] == [
        f"precondition failed: no evidence for selector {RECALL}"
    ]
    assert len(first.extra_selections) == 1 and kinds(first) == ["read_entity"]
    reselection_prompt = first.extra_selections[0]["prompt"][-1]["content"]
    assert "precondition failed: no evidence for selector" in reselection_prompt
    assert traj.turns[1].observations[0].result == "committed"
    assert traj.outcome.outcome == "stop"


def test_a_second_rejection_consumes_the_turn(box):
    traj = run(box, [{"tool": "bash", "args": {"cmd": "ls"}}, FIX, STOP])
    first = traj.turns[0]
    assert [r.reason for r in first.rejections] == [
        "unknown tool: bash",
        f"precondition failed: no evidence for selector {RECALL}",
    ]
    rejected = first.observations[-1]
    assert rejected.kind == "rejected" and rejected.data == {
        "ok": False,
        "rejected": True,
        "tool": "edit_entity",
        "reason": f"precondition failed: no evidence for selector {RECALL}",
    }
    assert len(traj.turns) == 2 and traj.outcome.outcome == "stop"


@pytest.mark.parametrize(
    ("second", "outcome", "noop"),
    [
        (None, "model_error", None),  # the script runs out: the re-selection itself fails
        (STOP, "stop", None),
        ("not a call", "budget_exhausted", "reply is not JSON: Expecting value (char 0)"),
    ],
    ids=["model-error", "terminal", "noop"],
)
def test_a_reselection_that_is_no_call_ends_the_turn_as_that_reply(box, second, outcome, noop):
    traj = run(box, [FIX] if second is None else [FIX, second], PolicyConfig(max_turns=1))
    [turn] = traj.turns
    assert [r.reason for r in turn.rejections] == [
        f"precondition failed: no evidence for selector {RECALL}"
    ]
    assert len(turn.extra_selections) == 1 and turn.request is None and turn.noop == noop
    assert turn.observations == () and traj.outcome.outcome == outcome
    if second is None:
        assert "no reply left" in turn.extra_selections[0]["error"]
        assert traj.outcome.detail["reason"] == turn.extra_selections[0]["error"]


def test_unparseable_replies_are_no_op_turns_that_count_against_the_budget(box):
    config = PolicyConfig(max_noop_turns=2)
    traj = run(box, ["I think we should read the file first.", "{not json", STOP], config)
    assert [t.noop is not None for t in traj.turns] == [True, True]
    assert traj.outcome.record() == {
        "outcome": "budget_exhausted",
        "reason": "2 consecutive no-op turns",
    }


def test_several_calls_execute_only_the_first_and_defer_the_rest(box):
    both = json.dumps([READ, FIX])
    traj = run(box, [both, STOP])
    first = traj.turns[0]
    assert first.request.tool == "read_entity" and [c.tool for c in first.deferred] == [
        "edit_entity"
    ]
    assert kinds(first) == ["deferred", "read_entity"]
    assert traj.patch == ""  # the deferred edit never ran


def test_without_serialize_every_call_of_a_reply_runs(box):
    traj = run(box, [json.dumps([READ, FIX]), STOP], PolicyConfig().without("serialize"))
    assert kinds(traj.turns[0]) == ["read_entity", "edit_entity", "lint"]
    assert ">= expires" in traj.patch


def test_ask_user_halts_with_the_exact_outcome(box):
    ask = {"tool": "ask_user", "args": {"question": "Should ttl=0 mean never expire?"}}
    traj = run(box, [ask])
    assert traj.outcome.record() == {
        "outcome": "ask_user",
        "question": "Should ttl=0 mean never expire?",
    }
    assert len(traj.turns) == 1


def test_model_error_ends_the_run_and_keeps_the_trajectory(box):
    traj = run(box, [READ])  # the script runs out on turn 2
    assert traj.outcome.outcome == "model_error"
    assert "no reply left" in traj.outcome.detail["reason"]
    assert kinds(traj.turns[0]) == ["read_entity"]


def test_turn_cap_is_budget_exhausted_and_the_pending_patch_is_tested(box):
    traj = run(box, [READ, FIX], PolicyConfig(max_turns=2))
    assert traj.outcome.record() == {"outcome": "budget_exhausted", "reason": "turn cap 2 reached"}
    assert kinds(traj.turns[-1])[-1] == "test"


def test_gates_off_remove_their_behaviour(box):
    no_evidence = run(box, [FIX, STOP], PolicyConfig().without("validate.evidence"))
    assert no_evidence.turns[0].rejections == () and ">= expires" in no_evidence.patch


def test_trigger_test_off_means_no_post_patch_test(box):
    traj = run(box, [READ, FIX, STOP], PolicyConfig().without("trigger.test"))
    assert "test" not in [k for t in traj.turns for k in kinds(t)]


def test_trajectory_round_trips_through_json_lines(box, tmp_path):
    traj = run(box, [READ, FIX, STOP])
    path = tmp_path / "trajectories.jsonl"
    traj.save(path)
    traj.save(path)
    loaded = load_trajectories(path)
    assert len(loaded) == 2 and loaded[0] == traj
    assert loaded[0].tokens == traj.tokens and loaded[0].cost_usd == 0.0


def test_without_affordances_stop_is_an_unknown_tool_and_is_not_offered(box):
    config = PolicyConfig(max_turns=1).without("noop.affordances")
    traj = run(box, [STOP, STOP], config)
    turn = traj.turns[0]
    assert [r.reason for r in turn.rejections] == ["unknown tool: stop", "unknown tool: stop"]
    assert traj.outcome.outcome == "budget_exhausted"
    assert "stop — halt with a reason" not in turn.prompt[-1]["content"]
    with_affordances = run(box, [STOP]).turns[0].prompt[-1]["content"]
    assert "stop — halt with a reason" in with_affordances
