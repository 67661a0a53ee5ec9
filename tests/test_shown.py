"""The shown-state format (``shown.py``): real prompts, built by the prompt builders, read back by
the simulator's readers with the values they were built from; and a change of the format's
writer is a change of what the simulator reads (it keeps no copy of the prompt's strings), so
its decisions, end to end, are the same under a changed format."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_toolpolicy import shown
from pytest_toolpolicy.current.prompt import (
    format_error_message,
    issue_message,
    results_message,
    system_message,
)
from pytest_toolpolicy.models.sim import baseline_arm, policy_arm
from pytest_toolpolicy.policy.config import PolicyConfig
from pytest_toolpolicy.policy.ledger import Ledger, noop_observation
from pytest_toolpolicy.policy.observe import observe
from pytest_toolpolicy.policy.prompt import (
    MAX_LINE_CHARS,
    MAX_VERBATIM_CHARS,
    build_prompt,
    ledger_line,
    verbatim,
)
from pytest_toolpolicy.policy.registry import RESERVED, RESERVED_LINES, candidate_line
from pytest_toolpolicy.policy.retrieve import Candidates
from pytest_toolpolicy.policy.validate import rejection_observation
from pytest_toolpolicy.primitives.envelope import Envelope, fail, ok
from pytest_toolpolicy.types import Observation, Rejection, ToolCall

ISSUE = "Cart.total ignores the discount.\n\n  `Cart().total(discount=5)`   \n"
TOOLS = Candidates(tools=("read_entity", "edit_entity", "run_test"))
SEL = "shop.cart.Cart.total"
TARGET = "tests/test_cart.py::test_discount"


def _observed(tool: str, args: dict, envelope, trusted: bool = True) -> Observation:
    caveat = None if trusted else "exit_code: passed=true but exit_code=1"
    return observe(ToolCall(tool, args), envelope, envelope, trusted, caveat)


def _ledger() -> Ledger:
    """A run's ledger as the policy loop writes it: a read, a refused and a committed edit, a
    rejection, a failing test and an unverified one."""
    run = {"target": TARGET, "passed": False, "exit_code": 1, "output": "E assert 10 == 5\n"}
    return Ledger().append(
        _observed(
            "read_entity",
            {"selector": SEL},
            ok({"entity": {"selector": SEL, "kind": "method", "signature": "def total(self)"}}),
        ),
        _observed("edit_entity", {"selector": SEL}, fail("search text not found")),
        rejection_observation(Rejection("edit_entity", "missing argument: replace")),
        _observed("edit_entity", {"selector": SEL}, ok({"committed": True})),
        _observed("run_test", {"target": TARGET}, ok(run)),
        _observed("run_test", {"target": TARGET}, ok({**run, "passed": True}), trusted=False),
    )


def _policy_user(ledger: Ledger, config: PolicyConfig | None = None) -> str:
    system, user = build_prompt(TOOLS, ledger, ISSUE, config or PolicyConfig())
    assert system["role"] == "system" and user["role"] == "user"
    return user["content"]


# --- the policy arm ----------------------------------------------------------------------------


def test_a_policy_prompt_reads_back_as_it_was_built() -> None:
    ledger = _ledger()
    user = _policy_user(ledger)
    view = shown.read_policy(user)
    assert shown.is_policy(user)
    assert view.tools == (*map(candidate_line, TOOLS.tools), *map(RESERVED_LINES.get, RESERVED))
    assert view.ledger == tuple(ledger_line(e, MAX_LINE_CHARS) for e in ledger.entries)
    assert view.ledger == tuple(e.line() for e in ledger.entries)  # none is over its cap
    assert (view.shown, view.total, view.truncated) == (6, 6, False)
    assert view.latest == json.loads(verbatim(ledger.latest))
    assert (view.latest["kind"], view.latest["target"]) == ("run_test", TARGET)
    assert view.latest["trust"] == "unverified"
    assert view.issue == ISSUE  # verbatim, to its trailing whitespace
    # The simulator's own reading of the same prompt.
    assert policy_arm.read_prompt(user) == (list(view.ledger), view.latest)
    assert not policy_arm.ledger_truncated(user)


def test_each_ledger_line_reads_back_as_its_entry() -> None:
    ledger = _ledger()
    lines = shown.read_policy(_policy_user(ledger)).ledger
    for entry, line in zip(ledger.entries, lines, strict=True):
        kind, target, result = shown.entry_fields(line)
        assert (kind, target) == (entry.kind, entry.target)
        assert result.startswith(entry.result if isinstance(entry.result, str) else "{")
    read, refused, rejected, committed, failed, unverified = lines
    assert [shown.entry_is_error(line) for line in lines] == [0, 1, 0, 0, 0, 0]
    assert [policy_arm._is_commit(line) for line in lines] == [0, 0, 0, 1, 0, 0]
    assert [policy_arm._is_test(line) for line in lines] == [0, 0, 0, 0, 1, 1]
    assert [shown.entry_exit_code(line) for line in (failed, unverified)] == [1, 1]
    assert policy_arm._failed(failed) and policy_arm._failed(unverified)  # the code, not passed
    assert unverified.endswith("[unverified: exit_code: passed=true but exit_code=1]")
    assert policy_arm._refusal(refused, SEL) == "error: search text not found"
    assert policy_arm._refusal(rejected, SEL) is None  # names no selector
    assert policy_arm._refusal(read, SEL) is None


def test_a_truncated_window_an_empty_ledger_and_a_cut_observation() -> None:
    ledger = _ledger()
    user = _policy_user(ledger, PolicyConfig(ledger_window=2))
    view = shown.read_policy(user)
    assert (view.shown, view.total, view.truncated) == (2, 6, True)
    assert view.ledger == tuple(e.line() for e in ledger.entries[-2:])
    assert policy_arm.ledger_truncated(user)

    empty = shown.read_policy(_policy_user(Ledger()))
    assert (empty.ledger, empty.shown, empty.total, empty.latest) == ((), 0, 0, {})
    assert empty.latest_text == shown.NO_OBSERVATION and empty.issue == ISSUE

    big = Observation("run_test", TARGET, "x", data={"output": "E " * MAX_VERBATIM_CHARS})
    cut = shown.read_policy(_policy_user(Ledger().append(big)))
    assert cut.latest == {}  # a cut record is not read as JSON
    start, marker = cut.latest_text[:MAX_VERBATIM_CHARS], cut.latest_text[MAX_VERBATIM_CHARS:]
    assert cut.latest_text == verbatim(big)
    assert marker.startswith(f"… [truncated: {MAX_VERBATIM_CHARS} of ")
    assert marker.endswith(" chars shown]") and start.startswith('{"kind": "run_test"')


def test_a_rejection_and_a_no_op_read_back_with_their_whole_reasons() -> None:
    """The records of turns that ran nothing: a reason holding the separator (``, got 0``) stays
    whole in the line's result, and neither line reads as an error, a commit or a test."""
    window = "invalid arg: window (expected int 1..100, got 0)"
    ledger = _ledger().append(
        rejection_observation(Rejection("read_entity", window)),
        noop_observation('reply has an unknown field: "why"'),
    )
    view = shown.read_policy(_policy_user(ledger))
    rejected, noop = view.ledger[-2:]
    assert shown.entry_fields(rejected) == ["rejected", "read_entity", window]
    assert shown.entry_fields(noop) == ["noop", "reply", 'reply has an unknown field: "why"']
    for line in (rejected, noop):
        assert not shown.entry_is_error(line) and not policy_arm._is_commit(line)
        assert not policy_arm._is_test(line) and policy_arm._refusal(line, SEL) is None
    assert view.latest == json.loads(verbatim(ledger.latest)) and view.latest["kind"] == "noop"
    assert (view.shown, view.total) == (8, 8)


# --- the baseline arm --------------------------------------------------------------------------


def _chat() -> tuple[list[dict[str, str]], list[tuple[ToolCall, Envelope]]]:
    calls = [
        ToolCall("read_file", {"path": "shop/cart.py"}),
        ToolCall("edit_file", {"path": "shop/cart.py", "old": "a", "new": "b"}),
        ToolCall("bash", {"command": "python -m pytest -q tests"}),
        ToolCall("bash", {"command": "python -m pytest -q tests/test_cart.py"}),
    ]
    envelopes = [
        ok({"start": 1, "end": 2, "total_lines": 2, "content": "     1\tx = 1\n     2\ty = 2"}),
        fail("old text not found in shop/cart.py"),
        ok({"exit_code": 1, "output": "E assert 10 == 5\n1 failed"}),
        ok({"exit_code": 0, "output": "1 passed"}),
    ]
    reply = json.dumps([{"tool": c.tool, "args": c.args} for c in calls])
    results = list(zip(calls, envelopes, strict=True))
    messages = [
        system_message(),
        issue_message(ISSUE),
        {"role": "assistant", "content": reply},
        results_message(results),
    ]
    return messages, results


def test_a_baseline_chat_reads_back_as_it_was_built() -> None:
    messages, results = _chat()
    assert not shown.is_policy(messages[1]["content"])
    assert shown.read_issue(messages[1]["content"]) == ISSUE.strip()
    past = baseline_arm.history(messages)
    assert [call for call, _ in past] == [{"tool": c.tool, "args": c.args} for c, _ in results]
    for position, ((call, _), (_, block)) in enumerate(zip(results, past, strict=True), 1):
        head = shown.result_head(position, call.tool, str(next(iter(call.args.values()))))
        assert f"[{position}] {block}".startswith(head + "\n")
    assert [baseline_arm._ok(block) for _, block in past] == [True, False, True, True]
    assert [shown.block_passed(block) for _, block in past[2:]] == [False, True]
    assert "old text not found" in past[1][1]
    assert not shown.mentions_error(results_message(results[:1])["content"])
    assert shown.mentions_error(messages[3]["content"])
    fault = format_error_message("the reply is not valid JSON")["content"]
    assert shown.is_format_error(fault) and shown.mentions_error(fault)


# --- a change of the format is a change of what the simulator reads ----------------------------

CHANGED = {
    "CANDIDATES": "## Tools you may call",
    "STATE": "## Where things stand",
    "LEDGER": "### Journal",
    "WINDOW": "[{shown} shown of {total}]",
    "EMPTY_LEDGER": "(nothing yet)",
    "LATEST": "### Newest observation",
    "NO_OBSERVATION": "(nothing)",
    "ISSUE": "## Problem",
    "ISSUE_OPEN": "<problem>",
    "ISSUE_CLOSE": "</problem>",
    "RESULT_HEAD": "<{position}> {tool} {target}",
    "EXIT_CODE": "exit status {code}",
    "OUTPUT": "captured:",
    "FORMAT_ERROR": "Unparsable reply: {reason}",
}


@pytest.fixture
def changed_format(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in CHANGED.items():
        assert hasattr(shown, name), name
        monkeypatch.setattr(shown, name, value)


def test_a_changed_format_is_written_and_read_alike(changed_format: None) -> None:
    ledger = _ledger()
    user = _policy_user(ledger, PolicyConfig(ledger_window=2))
    assert "### Journal [2 shown of 6]" in user and "### Ledger" not in user  # the writer changed
    view = shown.read_policy(user)
    assert shown.is_policy(user)
    assert view.ledger == tuple(e.line() for e in ledger.entries[-2:])
    assert (view.shown, view.total, view.truncated) == (2, 6, True)
    assert view.latest == json.loads(verbatim(ledger.latest)) and view.issue == ISSUE
    assert policy_arm.ledger_truncated(user)

    messages, results = _chat()
    assert messages[1]["content"].startswith("<problem>\n")
    assert shown.read_issue(messages[1]["content"]) == ISSUE.strip()
    assert messages[3]["content"].startswith("<1> read_file shop/cart.py\n")
    past = baseline_arm.history(messages)
    assert [baseline_arm._ok(block) for _, block in past] == [True, False, True, True]
    assert "exit status 0\ncaptured:" in past[3][1] and shown.block_passed(past[3][1])
    assert not shown.block_passed(past[2][1])
    fault = format_error_message("no JSON")["content"]
    assert fault.startswith("Unparsable reply: no JSON") and shown.mentions_error(fault)


@pytest.fixture(scope="module")
def runs() -> dict[str, object]:
    from pytest_toolpolicy.bench import load_instances

    instances = load_instances("bundled").instances
    resolvable = [i for i in instances if i.patch and not i.underspecified]
    return {"by_id": {i.instance_id: i for i in instances}, "resolvable": resolvable}


def _run(runs: dict, index: int, arm: str, workdir: Path) -> dict:
    """One default-profile run (seed 0) in ``workdir``, as its completions and outcome."""
    from pytest_toolpolicy.models.spec import build_model
    from pytest_toolpolicy.run.pipeline import run_instance

    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir()
    model = build_model("sim", instances=runs["by_id"], seed=0)
    trajectory = run_instance(runs["resolvable"][index], arm, model, workdir=workdir).trajectory
    record = trajectory.to_dict()
    prompts = [m["content"] for t in trajectory.turns for m in t.prompt]
    return {
        "replies": [(t["completion"] or {}).get("text") for t in record["turns"]],
        "outcome": record["outcome"],
        "prompts": "\n".join(prompts),
    }


@pytest.mark.parametrize(
    ("index", "arm"),
    [(0, "policy"), pytest.param(1, "current", marks=pytest.mark.slow)],  # ~5 s a run
)
def test_the_simulator_decides_alike_under_a_changed_format(
    runs: dict, index: int, arm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """End to end: the same run under the format and under a changed one makes the same
    replies to the end; had the simulator kept its own copy of a heading or a marker, it would
    misread the changed prompts and decide differently (or stop)."""
    before = _run(runs, index, arm, tmp_path / "run")
    for name, value in CHANGED.items():
        monkeypatch.setattr(shown, name, value)
    after = _run(runs, index, arm, tmp_path / "run")
    assert ("## Tools you may call" in after["prompts"]) == (arm == "policy")
    assert ("<problem>" in after["prompts"]) == (arm == "current")
    assert after["prompts"] != before["prompts"]
    assert len(before["replies"]) > 2
    assert after["replies"] == before["replies"] and after["outcome"] == before["outcome"]


def test_the_simulator_spells_none_of_the_format() -> None:
    """No heading, marker or line template of the format is written out in ``models/sim/``:
    each is read through ``shown``."""
    import pytest_toolpolicy.models.sim as sim

    sources = {
        p.name: p.read_text(encoding="utf-8") for p in Path(sim.__file__).parent.glob("*.py")
    }
    spelled = [
        shown.CANDIDATES,
        shown.STATE,
        shown.LEDGER,
        shown.WINDOW.partition("{")[0],
        shown.LATEST,
        shown.ISSUE + "\\n",
        shown.EMPTY_LEDGER,
        shown.ISSUE_OPEN,
        shown.EXIT_CODE.partition("{")[0],
        "\\[(\\d+)\\] ",  # the result head as a pattern
        shown.FORMAT_ERROR.partition(":")[0],
        f'"{shown.EXIT_CODE_KEY}": ',
    ]
    found = [(name, s) for name, text in sources.items() for s in spelled if s in text]
    assert not found
