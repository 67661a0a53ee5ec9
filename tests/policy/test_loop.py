import json
import shutil
from pathlib import Path

import pytest

from pytest_toolpolicy import shown
from pytest_toolpolicy.demo import EXAMPLE
from pytest_toolpolicy.models.scripted import ScriptedModel
from pytest_toolpolicy.policy.config import PolicyConfig
from pytest_toolpolicy.policy.loop import PolicyLoop, Task
from pytest_toolpolicy.policy.parse import parse_reply
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
# pytest plugins, as the A/B's own toolbox for a bundled project (run/arms.py): the project needs
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


def user(turn):
    """The user message of a turn's (first) selection prompt."""
    return turn.prompt[-1]["content"]


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
    assert len(first.extra_selections) == 1 and kinds(first) == ["rejected", "read_entity"]
    reselection_prompt = first.extra_selections[0]["prompt"][-1]["content"]
    assert "precondition failed: no evidence for selector" in reselection_prompt
    # The rejection stays in the ledger: the next turn's prompt still shows it.
    assert shown.read_policy(user(traj.turns[1])).ledger[0] == (
        f"rejected, edit_entity, precondition failed: no evidence for selector {RECALL}"
    )
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
    assert kinds(turn) == ["rejected"] + (["noop"] if noop else [])
    assert traj.outcome.outcome == outcome
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


# --- what a turn that ran nothing leaves for the next prompt ------------------------------------

UNKNOWN = {"tool": "python.c", "args": {}}
REJECTED_LINE = "rejected, python.c, unknown tool: python.c"
NOT_JSON = "reply is not JSON: Expecting value (char 0)"


def test_a_rejection_then_an_unparseable_reselection_both_reach_the_next_prompt(box):
    """A tiny model's run: an unknown tool, then prose. Turn 2's prompt was turn 1's, byte for
    byte, and the model said the same again; now it shows both reasons, exactly."""
    traj = run(box, [UNKNOWN, "not json", STOP])
    first, second = traj.turns
    assert user(second) != user(first)
    assert [r.reason for r in first.rejections] == ["unknown tool: python.c"]
    assert len(first.extra_selections) == 1  # the one re-selection; the no-op is not re-prompted
    assert first.noop == NOT_JSON and kinds(first) == ["rejected", "noop"]
    view = shown.read_policy(user(second))
    assert view.ledger == (REJECTED_LINE, f"noop, reply, {NOT_JSON}")
    assert view.latest["kind"] == "noop"
    assert view.latest["data"] == {"noop": True, "reason": NOT_JSON}
    assert traj.outcome.outcome == "stop"


def test_a_second_rejection_reaches_the_next_prompt_beside_the_first(box):
    traj = run(box, [UNKNOWN, UNKNOWN, STOP])
    first, second = traj.turns
    assert [r.reason for r in first.rejections] == ["unknown tool: python.c"] * 2
    assert kinds(first) == ["rejected", "rejected"]
    view = shown.read_policy(user(second))
    assert view.ledger == (REJECTED_LINE, REJECTED_LINE)
    assert view.latest["data"] == {
        "ok": False,
        "rejected": True,
        "tool": "python.c",
        "reason": "unknown tool: python.c",
    }


@pytest.mark.parametrize(
    "reply",
    [
        "not json",
        "I will read the file first.",
        '{"tool": "read_entity", "args": {}, "why": "to see it"}',
        '{"tool": "read_entity", "args": []}',
        '{"tool": "read_entity"} and then',
    ],
)
def test_a_parse_failure_reaches_the_next_prompt_with_the_parsers_own_reason(box, reply):
    reason = parse_reply(reply).reason
    traj = run(box, [reply, STOP])
    first, second = traj.turns
    assert first.noop == reason and first.extra_selections == ()  # never re-prompted
    assert shown.read_policy(user(first)).ledger == ()
    view = shown.read_policy(user(second))
    assert view.ledger == (f"noop, reply, {reason}",)
    assert view.latest["data"] == {"noop": True, "reason": reason}


def test_consecutive_no_op_turns_each_show_the_last_reason(box):
    traj = run(box, ["not json", "{not json", STOP], PolicyConfig(max_noop_turns=3))
    reasons = [t.noop for t in traj.turns[:2]]
    assert reasons == [NOT_JSON, parse_reply("{not json").reason]
    third = shown.read_policy(user(traj.turns[2]))
    assert third.ledger == tuple(f"noop, reply, {r}" for r in reasons)
    assert third.latest["data"]["reason"] == reasons[1]


def test_a_rejected_dotted_name_fires_no_symbol_search(box):
    """A rejection is the harness's record of the model's guess, not an observation of the code:
    ``python.c`` matches the symbol regex, and still no search runs for it (a rejection never
    escalates into more tool calls)."""
    traj = run(box, [UNKNOWN, UNKNOWN, "not json", STOP])
    assert all(o.kind != "symbol" for t in traj.turns for o in t.observations)
    assert all(o.source == "harness" for t in traj.turns for o in t.observations)


def test_a_trajectory_with_rejections_and_no_ops_round_trips(box, tmp_path):
    traj = run(box, [UNKNOWN, "not json", STOP])
    path = tmp_path / "trajectories.jsonl"
    traj.save(path)
    assert load_trajectories(path) == [traj]


def test_a_request_the_endpoint_refuses_is_the_arms_failure_not_a_model_error(box, monkeypatch):
    """The arm's own request refused (its prompt past the context: a 400) ends the run as the
    arm's failure, measured; the pending patch is still tested, as at any other end."""
    from pytest_toolpolicy.models import OpenAIModel, Price, PriceTable

    from ..models.stub_server import Reply, StubServer, loopback_only, ok

    loopback_only(monkeypatch)
    too_long = Reply(400, {"error": {"message": "maximum context length is 8192 tokens"}})
    with StubServer(ok(json.dumps(READ)), ok(json.dumps(FIX)), too_long) as stub:
        model = OpenAIModel("m", base_url=stub.url, max_retries=0,
                            prices=PriceTable({"m": Price(0, 0, 0)}))  # fmt: skip
        traj = PolicyLoop(box, model).run(Task("memstore-1", ISSUE, TARGET))
    assert traj.outcome.outcome == "budget_exhausted"
    assert traj.outcome.detail["reason"].startswith("the arm's request was refused: openai:m")
    assert traj.turns[-1].completion["blame"] == "request"
    assert traj.cost_usd == 0.0  # the refused call spent nothing, and that is known
    assert kinds(traj.turns[-1])[-1] == "test"  # the fix formed before it was tested
