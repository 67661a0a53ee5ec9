"""How often each gate acted, read off a policy trajectory; and a gate that never acted is
reported as such beside its ablation verdict, never as a silent "no change"."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from pytest_toolpolicy.decide.render import render_text
from pytest_toolpolicy.decide.table import decision_table
from pytest_toolpolicy.demo import EXAMPLE
from pytest_toolpolicy.models.scripted import ScriptedModel
from pytest_toolpolicy.policy.config import GATES, PolicyConfig
from pytest_toolpolicy.policy.loop import PolicyLoop, Task
from pytest_toolpolicy.primitives import Toolbox
from pytest_toolpolicy.run import gate_acts

from ..decide.results_factory import frame, variant_rows
from .trajectories import always_asks, busy_policy_run


def test_each_gate_counts_what_switching_it_off_would_undo() -> None:
    acts = gate_acts.acts(busy_policy_run())
    assert set(acts) == set(GATES)
    assert acts == {
        "trigger.lint": 1,
        "trigger.test": 1,
        "trigger.symbol": 1,
        "validate.registry": 1,
        "validate.args": 0,
        "validate.evidence": 1,
        "noop.affordances": 1,  # it stopped
        "serialize": 1,
        "retrieve.top5": 2,  # the third selection was shown all six tools
        "retrieve.embed": 1,
        "trust.exit_code": 1,
        "trust.schema": 1,  # one caveat naming two checks counts for each
        "trust.round_trip": 0,
        "trust.lint": 0,
    }


def test_a_rejection_the_ledger_also_records_is_counted_once(tmp_path: Path) -> None:
    """The loop keeps each rejection in the turn's ``rejections`` and, as a ``rejected``
    observation, in its ledger: the first, shown to the re-selection, and the second."""
    root = tmp_path / "memstore"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("__pycache__"))
    edit = {"selector": "memstore.store.MemStore.recall", "search": "a", "replace": "b"}
    replies = [
        {"tool": "bash", "args": {"cmd": "ls"}},
        {"tool": "edit_entity", "args": edit},
        {"tool": "stop", "args": {"reason": "done"}},
    ]
    model = ScriptedModel([json.dumps(r) for r in replies])
    run = PolicyLoop(Toolbox(root), model, PolicyConfig()).run(Task("memstore-1", "issue"))
    [turn, _] = run.turns
    assert len(turn.rejections) == 2
    assert [o.kind for o in turn.observations] == ["rejected", "rejected"]
    acts = gate_acts.acts(run)
    assert (acts["validate.registry"], acts["validate.evidence"]) == (1, 1)


def test_a_run_that_only_asked_acted_through_the_affordances_alone() -> None:
    acts = gate_acts.acts(always_asks("repo__m-1", underspecified=True))
    assert {g for g, n in acts.items() if n} == {"noop.affordances"}


def test_an_embedding_fallback_without_its_model_is_blocked_not_acted() -> None:
    run = busy_policy_run()
    turn = run.turns[0]
    unavailable = {"tools": ["read_entity"], "fallback": "default-4 (embedder unavailable: gone)"}
    run = run.__class__(**{**run.__dict__, "turns": (turn.__class__(
        **{**turn.__dict__, "retrieval": (unavailable,)}),)})  # fmt: skip
    assert gate_acts.acts(run)["retrieve.embed"] == 0
    assert gate_acts.blocked(run) == {"retrieve.embed": 1}


def _ablated(policy_acts: dict[str, int], blocked: dict[str, int] | None = None):
    rows = variant_rows("current", [False, False])
    rows += variant_rows("policy", [True, False], gate_acts=json.dumps(policy_acts),
                         gate_blocked=json.dumps(blocked or {}))  # fmt: skip
    rows += variant_rows("policy-no:retrieve.embed", [True, False])
    rows += variant_rows("policy-no:trust.exit_code", [True, False])
    return decision_table(frame(rows))


def test_the_ablation_row_says_how_often_its_gate_acted_in_the_policy() -> None:
    table = _ablated({"retrieve.embed": 0, "trust.exit_code": 3})
    assert table.loc["policy-no:trust.exit_code", "gate_acts"] == 6  # 3 in each of 2 runs
    assert table.loc["policy-no:retrieve.embed", "gate_acts"] == 0
    text = render_text(table, {"model": "sim", "dataset": "bundled"})
    assert "gate trust.exit_code: delete (acted 6×)" in text
    assert (
        "gate retrieve.embed: delete (never acted here: no change is no evidence either way)"
        in text
    )


def test_a_gate_that_could_not_act_says_why() -> None:
    table = _ablated({"retrieve.embed": 0}, {"retrieve.embed": 4})
    text = render_text(table, {"model": "sim", "dataset": "bundled"})
    assert "gate retrieve.embed: delete (never acted here: its model could not be loaded (8×)" in (
        text
    )
