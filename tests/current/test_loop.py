from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_toolpolicy.current import CurrentLoop
from pytest_toolpolicy.current.prompt import TOOL_SCHEMAS
from pytest_toolpolicy.models import OpenAIModel, Price, PriceTable
from pytest_toolpolicy.models.scripted import ScriptedModel
from pytest_toolpolicy.policy.loop import Task
from pytest_toolpolicy.primitives import Toolbox
from pytest_toolpolicy.types import Outcome, Trajectory, load_trajectories

from ..models.stub_server import Reply, StubServer, loopback_only, ok

STORE = "memstore/store.py"
TEST = "tests/test_store.py::test_expired_value_is_gone"
ISSUE = "A value stored with ttl=10 is still returned by recall at exactly t=10; it should expire."
READ = {"tool": "read_file", "args": {"path": STORE}}
FIX = {
    "tool": "edit_file",
    "args": {"path": STORE, "old": "self._clock() > expires", "new": "self._clock() >= expires"},
}
PYTEST = {"tool": "bash", "args": {"command": f"python -m pytest -q {TEST}"}}
SUBMIT = {"tool": "submit", "args": {"message": "expire at the boundary"}}
FREE = PriceTable({"m": Price(0, 0, 0)})


def run(box: Toolbox, replies: list[Any], **kwargs: Any) -> Trajectory:
    model = ScriptedModel([r if _is_reply(r) else json.dumps(r) for r in replies])
    return CurrentLoop(box, model, **kwargs).run(Task("memstore-1", ISSUE, TEST))


def test_read_edit_pytest_submit_resolves_the_demo_bug(box: Toolbox) -> None:
    traj = run(box, [READ, FIX, PYTEST, SUBMIT])
    assert traj.outcome == Outcome("stop", {"reason": "expire at the boundary"})
    assert (traj.arm, traj.variant, traj.model) == ("current", "current", "scripted")
    assert [t.request.tool for t in traj.turns] == ["read_file", "edit_file", "bash", "submit"]
    read, edit, test = (t.observations[0] for t in traj.turns[:3])
    assert (read.kind, read.target, read.source) == ("read_file", STORE, "model")
    content = read.data["data"]["content"]
    assert "    23\t        if expires is not None and self._clock() > expires:" in content
    assert edit.result == "replaced 1 match at line 23"
    assert test.result == "exit_code=0" and "1 passed" in test.data["data"]["output"]
    assert traj.turns[3].observations == () and traj.turns[3].deferred == ()
    assert "+        if expires is not None and self._clock() >= expires:" in traj.patch
    assert traj.meta["test_target"] is None


def test_every_prompt_carries_all_schemas_and_the_issue_first(box: Toolbox) -> None:
    traj = run(box, [READ, SUBMIT])
    for turn in traj.turns:
        system, issue = turn.prompt[:2]
        assert system["role"] == "system" and issue == {
            "role": "user",
            "content": f"<issue>\n{ISSUE}\n</issue>",
        }
        for schema in TOOL_SCHEMAS:
            assert json.dumps(schema) in system["content"]


def test_several_calls_in_one_reply_run_in_order(box: Toolbox) -> None:
    first = {"tool": "bash", "args": {"command": "echo one > order.txt"}}
    second = {"tool": "bash", "args": {"command": "echo two >> order.txt; cat order.txt"}}
    traj = run(box, [[first, second, FIX], SUBMIT])
    turn = traj.turns[0]
    assert turn.request.args == first["args"]
    assert [o.kind for o in turn.observations] == ["bash", "bash", "edit_file"]
    assert turn.observations[1].data["data"]["output"] == "one\ntwo\n"
    results = traj.turns[1].prompt[-1]["content"]
    assert results.index("[1] bash echo one") < results.index("[2] bash") < results.index("[3]")


def test_calls_after_submit_in_the_same_reply_are_not_run(box: Toolbox) -> None:
    traj = run(box, [SUBMIT, FIX, {"tool": "write_file", "args": {"path": "x", "content": ""}}])
    assert traj.outcome.outcome == "stop" and len(traj.turns) == 1
    assert traj.turns[0].observations == ()
    assert not (box.root / "x").exists()


def test_a_submit_after_calls_waits_until_the_model_has_seen_their_results(box: Toolbox) -> None:
    # Qwen2.5-Coder-1.5B's first reply on inventory-3: [run the tests, submit]. Ending there
    # would grade a fix the model never checked; the model reads the results and decides.
    traj = run(box, [[FIX, PYTEST, SUBMIT], SUBMIT])
    first, second = traj.turns
    assert [o.kind for o in first.observations] == ["edit_file", "bash"]
    assert [c.tool for c in first.executed] == ["edit_file", "bash"]
    results = second.prompt[-1]["content"]
    assert "[3] submit" in results and "not run: submit came after calls" in results
    assert "1 passed" in results
    assert traj.outcome == Outcome("stop", {"reason": "expire at the boundary"})


def test_the_history_grows_with_every_reply_and_its_results(box: Toolbox) -> None:
    traj = run(box, [READ, FIX, SUBMIT])
    third = traj.turns[2].prompt
    assert [m["role"] for m in third] == ["system", "user", *["assistant", "user"] * 2]
    assert third[2]["content"] == json.dumps(READ)
    assert third[3]["content"].startswith(f"[1] read_file {STORE}\nlines 1-")
    assert "    23\t" in third[3]["content"]
    assert third[:4] == traj.turns[1].prompt


def test_an_unparseable_reply_gets_a_format_error_and_counts_as_a_turn(box: Toolbox) -> None:
    fenced = "```json\n" + json.dumps(SUBMIT) + "\n```"
    traj = run(box, ["I will read the file first.", fenced])
    bad, done = traj.turns
    assert bad.noop.startswith("the reply is not valid JSON") and bad.request is None
    assert done.prompt[-1]["content"].startswith("Format error: the reply is not valid JSON")
    assert traj.outcome.outcome == "stop" and len(traj.turns) == 2


def test_unknown_tools_and_bad_args_are_errors_for_that_call_only(box: Toolbox) -> None:
    reply = [{"tool": "grep", "args": {"pattern": "x"}}, {"tool": "read_file", "args": {}}, FIX]
    traj = run(box, [reply, SUBMIT])
    results = [o.result for o in traj.turns[0].observations]
    assert results[0].startswith("error: unknown tool") and "invalid args" in results[1]
    assert results[2] == "replaced 1 match at line 23"
    assert "error: unknown tool: 'grep'" in traj.turns[1].prompt[-1]["content"]


def test_an_escaping_path_is_refused_and_nothing_outside_is_touched(box: Toolbox) -> None:
    outside = box.root.parent / "victim.txt"
    outside.write_text("keep\n")
    write = {"tool": "write_file", "args": {"path": "../victim.txt", "content": "pwned"}}
    traj = run(box, [write, SUBMIT])
    assert "outside the workspace" in traj.turns[0].observations[0].result
    assert outside.read_text() == "keep\n" and traj.patch == ""


def test_the_turn_cap_ends_the_run(box: Toolbox) -> None:
    traj = run(box, [READ, READ, READ], max_turns=2)
    assert traj.outcome == Outcome("budget_exhausted", {"reason": "turn cap 2 reached"})
    assert len(traj.turns) == 2


def test_the_cost_cap_ends_the_run(box: Toolbox) -> None:
    replies = [{"text": json.dumps(READ), "cost_usd": 0.6}] * 3
    traj = run(box, replies, max_cost_usd=1.0)
    assert traj.outcome.outcome == "budget_exhausted" and len(traj.turns) == 2
    assert traj.outcome.detail["reason"].startswith("cost cap $1 reached")


def test_a_model_error_ends_the_run_with_its_reason(box: Toolbox) -> None:
    traj = run(box, [FIX])  # the script runs dry on turn 2
    assert traj.outcome.outcome == "model_error"
    assert "no reply left" in traj.outcome.detail["reason"]
    failed = traj.turns[-1].completion
    assert traj.turns[-1].prompt and failed is not None
    # The failed call is on record with its tokens unknown, so the run's cost is unknown too.
    assert failed["error"] == traj.outcome.detail["reason"] and failed["text"] == ""
    assert failed["usage"]["missing"] is True and failed["cost_usd"] is None
    assert traj.cost_usd is None
    assert "self._clock() >= expires" in traj.patch


def test_a_trajectory_round_trips_through_save_and_load(box: Toolbox, tmp_path: Path) -> None:
    traj = run(box, ["not json", [READ, FIX], PYTEST, SUBMIT])
    path = tmp_path / "runs.jsonl"
    traj.save(path)
    traj.save(path)
    loaded = load_trajectories(path)
    assert loaded == [traj, traj]


def _is_reply(reply: Any) -> bool:
    return isinstance(reply, str) or (isinstance(reply, dict) and "text" in reply)


def test_a_request_the_endpoint_refuses_is_the_arms_failure_and_its_5xx_the_endpoints(
    box: Toolbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 400 about the arm's own request (its prompt past the context) ends the run as the
    arm's failure, measured, at $0 for the refused call; a 5xx is the endpoint's model_error."""
    loopback_only(monkeypatch)
    fix = ok(json.dumps(FIX))
    too_long = Reply(400, {"error": {"message": "maximum context length is 8192 tokens"}})
    down = Reply(503, {"error": {"message": "overloaded"}})
    ended = {}
    for failure in (too_long, down):
        box.workspace.restore(box.workspace.base)  # type: ignore[union-attr]
        with StubServer(fix, failure) as stub:
            model = OpenAIModel("m", base_url=stub.url, max_retries=0, prices=FREE)
            ended[failure.status] = CurrentLoop(box, model).run(Task("memstore-1", ISSUE, TEST))
    refused, failed = ended[400], ended[503]
    assert refused.outcome.outcome == "budget_exhausted"
    assert refused.outcome.detail["reason"].startswith("the arm's request was refused: openai:m")
    assert refused.outcome.detail["reason"].endswith("maximum context length is 8192 tokens")
    assert refused.turns[-1].completion["blame"] == "request"  # type: ignore[index]
    assert refused.cost_usd == 0.0 and "self._clock() >= expires" in refused.patch
    assert failed.outcome.outcome == "model_error" and failed.cost_usd is None
