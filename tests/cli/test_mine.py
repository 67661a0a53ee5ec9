"""``toolpolicy mine`` from the command line: output as it goes, resumable, usage errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_toolpolicy.cli import main

from ..malformed import one_line, write_malformed
from ..mine.history_repo import History, make_history


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> History:
    return make_history(tmp_path_factory.mktemp("mine") / "acme__calc")


def rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_candidates_then_a_second_walk_does_only_what_is_new(
    repo: History, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "mined.jsonl"
    argv = ["mine", str(repo.root), "--out", str(out), "--no-run"]
    assert main([*argv, "--limit", "3"]) == 0
    printed = capsys.readouterr().out
    assert "acme/calc: 3 commits in the walk, 0 done before" in printed
    assert (
        f"[3/3] {repo.tests_only[:12]} " in printed
        and "dropped: touches test files only" in printed
    )
    assert "1 candidates (not instances until their tests run) kept" in printed
    assert "dropped: statement 1, candidate 1" in printed
    assert [r["mined_from"] for r in rows(out)] == [repo.merge]
    skipped = tmp_path / "mined.skipped.jsonl"
    line = rows(skipped)[1]
    assert set(line.pop("mining")) == {"seconds", "environment_seconds"}  # for yield tables
    assert line == {
        "commit": repo.tests_only, "kind": "candidate", "why": "touches test files only"
    }  # fmt: skip
    assert main(argv) == 0  # the whole walk: the three done before are not done again
    printed = capsys.readouterr().out
    assert "5 commits in the walk, 3 done before" in printed
    assert [r["mined_from"] for r in rows(out)] == [repo.merge, repo.fix]
    assert [r["commit"] for r in rows(skipped)] == [repo.thin, repo.tests_only, repo.docs]
    assert main([*argv, "--fresh", "--limit", "1"]) == 0
    assert [r["mined_from"] for r in rows(out)] == [repo.merge] and not skipped.exists()


def test_a_line_torn_by_a_crash_is_mined_again(
    repo: History, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "mined.jsonl"
    assert main(["mine", str(repo.root), "--out", str(out), "--no-run", "--limit", "1"]) == 0
    with out.open("a") as handle:  # a row of the wrong shape, then the process died mid-line
        handle.write('{"mined_from": 7}\n{"instance_id": "acme__calc-')
    capsys.readouterr()
    assert main(["mine", str(repo.root), "--out", str(out), "--no-run", "--limit", "4"]) == 0
    captured = capsys.readouterr()
    assert one_line(captured.err) == (
        f"toolpolicy mine: {out}:2: no mined_from named (2 malformed lines skipped: 2, 3)"
    )
    assert "4 commits in the walk, 1 done before" in captured.out  # the good line was used
    assert [r["mined_from"] for r in rows(out)] == [repo.merge, repo.fix]


def test_a_malformed_statements_file_is_one_line_and_exit_two(
    repo: History, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    statements = tmp_path / "statements.jsonl"
    good = {"commit": repo.fix, "problem_statement": "Division floors"}
    write_malformed(statements, [good], {**good, "problem_statement": ["a list"]})
    out = tmp_path / "mined.jsonl"
    argv = ["mine", str(repo.root), "--out", str(out), "--statements", str(statements)]
    assert main(argv) == 2
    assert one_line(capsys.readouterr().err) == (
        f"toolpolicy mine: {statements}:2: commit and problem_statement must be strings"
    )
    assert not out.exists()  # nothing mined on a statement file it cannot read


def test_a_repository_named_otherwise(
    repo: History, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    link = tmp_path / "calc"
    link.symlink_to(repo.root)
    out = tmp_path / "mined.jsonl"
    assert main(["mine", str(link), "--out", str(out), "--no-run", "--limit", "1"]) == 0
    assert rows(out)[0]["repo"] == "acme/calc"  # the link's target is named acme__calc
    plain = tmp_path / "plain"
    plain.mkdir()
    assert main(["mine", str(plain), "--out", str(out)]) == 2
    assert "name the repository with --name OWNER/NAME" in capsys.readouterr().err
    assert main(["mine", str(repo.root), "--out", str(out), "--name", "acme"]) == 2
    assert "--name must be owner/name" in capsys.readouterr().err
    assert main(["mine", str(repo.root), "--out", str(out), "--rev", "nope"]) == 2
    assert "git rev-list failed" in capsys.readouterr().err
    assert main(["mine", str(repo.root)]) == 2
    assert "give REPO and --out FILE.jsonl (or --example DIR)" in capsys.readouterr().err
    assert main(["mine", str(repo.root), "--out", str(out), "--sample", "0"]) == 2
    assert "--sample must be a positive number" in capsys.readouterr().err


def test_a_seeded_sample_of_the_candidates(
    repo: History, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "mined.jsonl"
    argv = ["mine", str(repo.root), "--out", str(out), "--no-run", "--sample", "2", "--seed", "4"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "3 candidate changes; a sample of 2, seed 4" in printed  # fix, thin, merge
    skipped = rows(tmp_path / "mined.skipped.jsonl")
    done = [r["mined_from"] for r in rows(out)] + [r["commit"] for r in skipped]
    # every change that is no candidate is recorded; two of the three candidates are mined
    assert {repo.docs, repo.tests_only} < set(done) and len(done) == 4
    assert "dropped: candidate 2" in printed or "candidate 2" in printed
    chosen = set(done) - {repo.docs, repo.tests_only}
    assert main(argv) == 0  # resumed: the same sample, all of it done before
    assert "5 commits in the walk, 4 done before" in capsys.readouterr().out
    assert len(rows(out)) + len(rows(tmp_path / "mined.skipped.jsonl")) == 4
    assert main([*argv, "--fresh"]) == 0  # drawn again from scratch: the same changes
    again = [r["mined_from"] for r in rows(out)] + [
        r["commit"] for r in rows(tmp_path / "mined.skipped.jsonl")
    ]
    assert set(again) - {repo.docs, repo.tests_only} == chosen


def test_the_example_unpacks_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path.parent)
    assert main(["mine", "--example", tmp_path.name]) == 0  # relative, as a Makefile gives it
    mirror = tmp_path / "example__tally"
    assert f"toolpolicy mine {mirror} --out" in capsys.readouterr().out
    assert (mirror / "HEAD").is_file()
    out = tmp_path / "mined.jsonl"
    assert main(["mine", str(mirror), "--out", str(out), "--no-run"]) == 0
    printed = capsys.readouterr().out
    assert "example/tally: 9 commits in the walk" in printed
    assert "5 candidates (not instances until their tests run) kept" in printed
    assert "dropped: candidate 3, statement 1" in printed
    assert main(["mine", "--example", str(tmp_path)]) == 2
    assert "example__tally exists" in capsys.readouterr().err
    assert main(["mine", str(mirror), "--example", str(tmp_path)]) == 2
