"""``toolpolicy labels``, ``calibrate`` and ``probe`` from the shell: what they print and write,
malformed trajectories and remembered losses skipped and said once, a report with nothing to
label one line and exit 2."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_toolpolicy.ab.candidates import read_candidates
from pytest_toolpolicy.cli import main
from pytest_toolpolicy.models.local.model import URL_ENV
from pytest_toolpolicy.rounds.retrieval import rows_of
from pytest_toolpolicy.rounds.toolformer import Labeler
from pytest_toolpolicy.types import Outcome, Trajectory

from ..malformed import one_line, write_malformed
from ..rounds.test_labels import EDIT, READ, run, turn
from ..rounds.test_toolformer import FakeScorer, call_turn


def test_labels_and_calibrate_from_the_shell(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = [run("bundled__memstore-1", turn(0, READ, -0.5), turn(1, EDIT, -2.0)),
            run("bundled__memstore-6", turn(0, READ, -0.1))]  # fmt: skip
    (tmp_path / "trajectories.jsonl").write_text(
        "\n".join(json.dumps(t.to_dict()) for t in runs) + "\n"
    )
    assert main(["labels", str(tmp_path)]) == 0
    assert "3 decision points of 2 instances" in capsys.readouterr().out
    assert main(["calibrate", str(tmp_path), "--test-share", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "confidence trigger: a call runs when" in out and "deterministic gate" in out
    candidates, current = read_candidates(tmp_path / "rounds.toml")
    assert {c.name for c in candidates} == {"hybrid", "logprob-trigger", "bandit"}
    assert current is None
    # the live bandit's arms are the offline replay's thresholds
    bandit = next(c.bandit for c in candidates if c.bandit)
    assert bandit.feature == "lp_mean" and len(bandit.taus) > 1
    assert all(-2.0 <= t <= -0.5 for t in bandit.taus)  # the training split's quantiles
    assert main(["labels", str(tmp_path / "nowhere")]) == 2


WRONG_SHAPES = [
    (lambda r: {**r, "turns": "oops"}, "turns is not a list but a string"),
    (lambda r: {**r, "turns": [5]}, "turns[0] is not an object but a number"),
    (
        lambda r: {**r, "turns": [{**r["turns"][0], "completion": {
            **r["turns"][0]["completion"], "usage": {"prompt_tokens": "many",
                                                     "completion_tokens": 1}}}]},
        "turns[0].completion.usage.prompt_tokens is not a number but a string",
    ),
]  # fmt: skip


@pytest.mark.parametrize("command", ["labels", "calibrate"])
@pytest.mark.parametrize(("wrong", "why"), WRONG_SHAPES)
def test_a_torn_line_and_a_record_of_the_wrong_shape_are_skipped_and_said_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, wrong: Any, why: str
) -> None:
    runs = [run("bundled__memstore-1", turn(0, READ, -0.5), turn(1, EDIT, -2.0)),
            run("bundled__memstore-6", turn(0, READ, -0.1))]  # fmt: skip
    path = tmp_path / "trajectories.jsonl"
    good = [t.to_dict() for t in runs]
    torn = write_malformed(path, good, wrong(good[1]))
    assert main([command, str(tmp_path), "--test-share", "0.5"]) == 0
    out, err = capsys.readouterr()
    assert "3 decision points of 2 instances" in out  # both good trajectories, once each
    assert one_line(err) == (
        f"toolpolicy {command}: {path}:2: {why} (2 malformed lines skipped: 2, {torn})"
    )


def test_nothing_but_malformed_lines_is_one_line_and_exit_two(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "trajectories.jsonl"
    path.write_text('{"instance_id": "x", "tur')
    assert main(["labels", str(tmp_path)]) == 2
    assert one_line(capsys.readouterr().err).startswith(
        f"toolpolicy labels: {path}:1: cut short: not JSON: Unterminated string"
    )
    assert not (tmp_path / "labels.parquet").exists()


def test_the_shell_labels_from_remembered_losses_without_a_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = Trajectory("bundled__memstore-1", "policy", "policy", "m", (call_turn(),),
                     Outcome("stop"), meta={"grade": {"resolved": False}})  # fmt: skip
    (tmp_path / "trajectories.jsonl").write_text(json.dumps(run.to_dict()) + "\n")
    patches = {str(r["instance_id"]): str(r["patch"]) for r in rows_of("bundled")[0]}
    scorer = FakeScorer()
    scorer.name = "local:gemma3-270m"  # what the shell's scorer files its losses under
    Labeler(scorer, patches, tmp_path / "toolformer.jsonl").label(
        "bundled__memstore-1", call_turn()
    )
    assert main(["labels", str(tmp_path), "--toolformer"]) == 0  # nothing left to ask: no server
    captured = capsys.readouterr()
    assert "Toolformer's own label: 1 calls scored, 1 useful" in captured.out
    assert "Toolformer: 1 calls scored by local:gemma3-270m (0 could not be)" in captured.err
    with pytest.raises(SystemExit, match="needs a local: model"):
        main(["labels", str(tmp_path), "--toolformer", "--scorer", "openai:gpt-4o-mini"])


def test_the_shell_says_once_which_remembered_losses_it_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = Trajectory("bundled__memstore-1", "policy", "policy", "m", (call_turn(),),
                     Outcome("stop"), meta={"grade": {"resolved": False}})  # fmt: skip
    (tmp_path / "trajectories.jsonl").write_text(json.dumps(run.to_dict()) + "\n")
    patches = {str(r["instance_id"]): str(r["patch"]) for r in rows_of("bundled")[0]}
    scorer = FakeScorer()
    scorer.name = "local:gemma3-270m"
    cache = tmp_path / "toolformer.jsonl"
    Labeler(scorer, patches, cache).label("bundled__memstore-1", call_turn())
    with cache.open("a") as handle:  # a loss of the wrong type, then a build killed mid-line
        handle.write('{"key": "k", "loss": "low"}\n{"key": "z", "lo')
    assert main(["labels", str(tmp_path), "--toolformer"]) == 0  # all remembered: no server
    out, err = capsys.readouterr()
    assert "Toolformer's own label: 1 calls scored, 1 useful" in out  # from the good lines
    named = [line for line in err.splitlines() if str(cache) in line]
    assert "Traceback" not in err and named == [
        f"toolpolicy labels: {cache}:4: not a remembered loss (loss 'low')"
        " (2 malformed lines skipped: 4, 5)"
    ]


def test_only_local_models_have_states(capsys: pytest.CaptureFixture[str], tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert main(["probe", str(tmp_path), "--model", "openai:gpt-4o-mini"]) == 0
    assert "exposes no hidden states" in capsys.readouterr().out


def test_the_shell_skips_malformed_trajectories_and_refuses_a_torn_candidates_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A server named already, so none is started; every point falls in the test split, so no
    # probe is fitted and no hidden state asked of it.
    monkeypatch.setenv(URL_ENV, "http://127.0.0.1:9/v1")
    prompt = [{"role": "user", "content": "fix it"}]  # what the probe embeds
    good = [run(i, replace(turn(0, READ, -0.5), prompt=prompt)).to_dict()
            for i in ("bundled__memstore-1", "bundled__memstore-6")]  # fmt: skip
    path = tmp_path / "trajectories.jsonl"
    torn = write_malformed(path, good, {**good[1], "turns": [[]]})
    argv = ["probe", str(tmp_path), "--test-share", "0.99"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert "0 training and 2 test points" in out  # the two good trajectories' points
    assert one_line(err) == (
        f"toolpolicy probe: {path}:2: turns[0] is not an object but a list"
        f" (2 malformed lines skipped: 2, {torn})"
    )
    candidates = tmp_path / "rounds.toml"
    candidates.write_text('[candidate.hybrid]\nretrieve = "hybrid"\n[candidate.probe\n')
    assert main([*argv, "--candidates", str(candidates)]) == 2
    assert one_line(capsys.readouterr().err) == (
        f"toolpolicy probe: {candidates}:3: not TOML: Expected ']' at the end of a table"
        " declaration"
    )
    assert not (tmp_path / "probe.json").exists()  # refused before anything was fitted
