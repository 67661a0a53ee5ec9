"""``toolpolicy mine`` from the command line: output as it goes, resumable, usage errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_toolpolicy.cli import main

from .history_repo import History, make_history


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
    assert rows(skipped)[1] == {
        "commit": repo.tests_only, "kind": "candidate", "why": "touches test files only"
    }  # fmt: skip
    assert main(argv) == 0  # the whole walk: the three done before are not done again
    printed = capsys.readouterr().out
    assert "5 commits in the walk, 3 done before" in printed
    assert [r["mined_from"] for r in rows(out)] == [repo.merge, repo.fix]
    assert [r["commit"] for r in rows(skipped)] == [repo.thin, repo.tests_only, repo.docs]
    assert main([*argv, "--fresh", "--limit", "1"]) == 0
    assert [r["mined_from"] for r in rows(out)] == [repo.merge] and not skipped.exists()


def test_a_line_torn_by_a_crash_is_mined_again(repo: History, tmp_path: Path) -> None:
    out = tmp_path / "mined.jsonl"
    assert main(["mine", str(repo.root), "--out", str(out), "--no-run", "--limit", "1"]) == 0
    with out.open("a") as handle:
        handle.write('{"instance_id": "acme__calc-')  # the process died mid-line
    assert main(["mine", str(repo.root), "--out", str(out), "--no-run", "--limit", "4"]) == 0
    assert [r["mined_from"] for r in rows(out)] == [repo.merge, repo.fix]


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
    assert "name the repository with --name OWNER/NAME" in capsys.readouterr().out
    assert main(["mine", str(repo.root), "--out", str(out), "--name", "acme"]) == 2
    assert "--name must be owner/name" in capsys.readouterr().out
    assert main(["mine", str(repo.root), "--out", str(out), "--rev", "nope"]) == 2
    assert "git rev-list failed" in capsys.readouterr().out
