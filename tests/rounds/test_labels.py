"""Necessity labels as data: a row per decision point, its features known before the call ran,
its label from the counterfactual reruns where they ran and from the gold label otherwise, and
a split by instance."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from pytest_toolpolicy.rounds.calibrate import auc_of, fit
from pytest_toolpolicy.rounds.labels import LabelsError, Split, build, label_rows
from pytest_toolpolicy.types import Outcome, ToolCall, Trajectory, Turn


def reply(move: dict, lp: float | None = None) -> dict:
    extra = {"logprobs": [{"token": "{", "logprob": lp, "top": [["{", lp]]}]} if lp else {}
    return {"text": json.dumps(move), "usage": {"prompt_tokens": 1, "completion_tokens": 1},
            "cost_usd": 0.0, "latency_s": 0.0, "model": "m", "replayed": False, "extra": extra}  # fmt: skip


READ = {"tool": "read_entity", "args": {"selector": "memstore.MemStore.remember"}}
EDIT = {"tool": "edit_entity", "args": {"selector": "memstore.MemStore.remember",
                                        "search": "a", "replace": "b"}}  # fmt: skip
ASK = {"tool": "ask_user", "args": {"question": "which one?"}}


def run(
    instance: str, *turns: Turn, resolved: bool = False, per_call: list | None = None
) -> Trajectory:
    meta = {"grade": {"resolved": resolved}, "counterfactual": {"per_call": per_call or []}}
    return Trajectory(instance, "policy", "policy", "m", turns, Outcome("stop"), "", meta)


def turn(index: int, move: dict, lp: float | None = None, ran: bool = True) -> Turn:
    call = ToolCall(move["tool"], move["args"])
    return Turn(index, completion=reply(move, lp), executed=(call,) if ran else (),
                retrieval=({"tools": ["read_entity", "edit_entity"], "fallback": None},))  # fmt: skip


def test_points_features_and_labels() -> None:
    resolved = run("bundled__memstore-1", turn(0, READ, -0.5), turn(1, EDIT, -2.0),
                   resolved=True,
                   per_call=[{"ordinal": 0, "tool": "read_entity", "necessary": False},
                             {"ordinal": 1, "tool": "edit_entity", "necessary": True}])  # fmt: skip
    asked = run("bundled__memstore-6", turn(0, ASK, -0.1, ran=False))
    rows = label_rows([resolved, asked], Split())
    first, second, third = rows
    assert (first["move"], first["executed"], first["retrieved"]) == ("read_entity", True,
                                                                      "read_entity,edit_entity")  # fmt: skip
    # the counterfactual verdict wins over the gold label (which calls the first point necessary)
    assert (first["necessary"], first["label_source"], first["label_gold"]) == (
        False, "counterfactual", True)  # fmt: skip
    assert (second["necessary"], second["label_source"]) == (True, "counterfactual")
    assert first["lp_mean"] == -0.5 and second["turn"] == 1
    # an under-specified instance: its gold first move is ask_user, so no call was necessary
    assert (third["necessary"], third["label_source"], third["gold_correct"]) == (
        False, "gold", True)  # fmt: skip
    assert {r["split"] for r in rows if r["instance_id"] == "bundled__memstore-1"} == {
        Split().of("bundled__memstore-1")}  # fmt: skip


def test_an_unresolved_runs_calls_get_only_the_gold_label() -> None:
    rows = label_rows([run("bundled__memstore-1", turn(0, READ, -0.5))], Split())
    assert (rows[0]["label_counterfactual"], rows[0]["label_source"]) == (None, "gold")


def test_the_split_is_by_instance_seeded_and_stable() -> None:
    ids = [f"x-{n}" for n in range(400)]
    split = Split(seed=1, test_share=0.25)
    test = [i for i in ids if split.of(i) == "test"]
    assert 60 < len(test) < 140 and [i for i in ids[:200] if split.of(i) == "test"] == [
        i for i in test if int(i[2:]) < 200]  # adding instances moves no other  # fmt: skip
    other = Split(seed=2, test_share=0.25)
    assert [other.of(i) for i in ids] != [split.of(i) for i in ids]  # the seed moves it


def test_build_writes_parquet_beside_the_report(tmp_path: Path) -> None:
    with pytest.raises(LabelsError, match="no trajectories.jsonl"):
        build(tmp_path, Split())
    lines = [json.dumps(run("bundled__memstore-1", turn(0, READ, -0.5)).to_dict())]
    (tmp_path / "trajectories.jsonl").write_text("\n".join(lines) + "\n")
    frame = build(tmp_path, Split())
    again = pd.read_parquet(tmp_path / "labels.parquet")
    assert len(frame) == len(again) == 1 and str(again["necessary"].dtype) == "boolean"


def frame(points: list[tuple[str, str, float, bool]]) -> pd.DataFrame:
    return pd.DataFrame([
        {"instance_id": i, "split": s, "arm": "policy", "trial": 1, "move": "read_entity", "lp_mean": lp,
         "lp_min": lp, "entropy": 0.5, "necessary": y}
        for i, s, lp, y in points
    ]).astype({"necessary": "boolean"})  # fmt: skip


def test_the_threshold_is_fitted_on_train_and_scored_on_test_only() -> None:
    train = [(f"a{n}", "train", lp, lp < -1) for n, lp in enumerate([-3, -2, -1.5, -0.5, -0.2])]
    test = [("b1", "test", -2.5, True), ("b2", "test", -0.1, False), ("b3", "test", -0.3, True)]
    calibration = fit(frame(train + test))
    trigger = calibration.trigger
    assert trigger is not None and trigger.necessary_when == "below"
    assert -1.5 < trigger.tau < -0.5 and calibration.train is not None
    assert calibration.train.errors == 0  # separable on train
    assert calibration.test is not None and calibration.test.errors == 1  # b3 withheld
    assert calibration.gate_test is not None and calibration.gate_test.recall == 1.0
    assert calibration.gate_test.precision == pytest.approx(2 / 3)
    assert calibration.auc == pytest.approx(auc_of(
        pd.Series([2.5, 0.1, 0.3]).to_numpy(), pd.Series([True, False, True]).to_numpy()))  # fmt: skip
    assert calibration.why == "both splits hold both classes"


def test_one_class_is_said_plainly() -> None:
    calibration = fit(frame([("a", "train", -1.0, True), ("b", "test", -2.0, True)]))
    assert "every training call is labelled necessary" in calibration.why
    assert calibration.auc != calibration.auc  # NaN: no AUC from one class
    assert calibration.trigger is not None and calibration.train is not None
    assert calibration.train.errors == 0 and calibration.test is not None
    assert calibration.test.recall == 1.0  # ties go to withholding nothing: the spec's gate


def test_the_bandit_finds_the_separating_threshold_and_its_regret_flattens() -> None:
    from pytest_toolpolicy.rounds.bandit import render, replay

    points = [(f"i{n}", "train" if n % 2 else "test", lp, lp < -1)
              for n, lp in enumerate([-3.0, -2.0, -0.5, -0.2] * 25)]  # fmt: skip
    result = replay(frame(points), "lp_mean", seed=1)
    assert result is not None and len(result.regret) == 100
    assert result.best is not None and -2.0 <= result.best < -0.5  # separates the two classes
    late = result.regret[-1] - result.regret[49]
    assert late < result.regret[49]  # it pays less in the second half than in the first
    assert "100 arrivals" in render(result) and "not reruns" in render(result)
    assert replay(frame(points).assign(lp_mean=float("nan")), "lp_mean") is None


def test_where_the_logprobs_came_from_is_a_column() -> None:
    simulated = reply(READ, -0.5)
    simulated["extra"]["logprobs_simulated"] = True
    runs = [
        run("bundled__memstore-1", turn(0, READ, -0.5)),
        run("bundled__memstore-1", Turn(0, completion=simulated)),
        run("bundled__memstore-1", turn(0, READ)),
    ]
    sources = [label_rows([r], Split())[0]["logprobs_source"] for r in runs]
    assert sources == ["endpoint", "simulated", "none"]


def test_a_fit_on_simulated_logprobs_says_so() -> None:
    from pytest_toolpolicy.rounds.rounds_file import render_report

    points = frame([("a", "train", -2.0, True), ("b", "train", -0.1, False),
                    ("c", "test", -1.5, True), ("d", "test", -0.2, False)])  # fmt: skip
    calibration = fit(points.assign(logprobs_source="simulated"))
    assert calibration.simulated and "SIMULATED" in render_report(calibration)
    assert not fit(points.assign(logprobs_source="endpoint")).simulated
