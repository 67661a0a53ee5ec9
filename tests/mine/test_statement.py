"""A mined instance's statement (``statement.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_toolpolicy.mine.statement import MIN_WORDS, from_message, read_supplied, statement

from .history_repo import FIX_MESSAGE


def test_the_message_without_trailers_and_the_issues_it_names() -> None:
    told = from_message(FIX_MESSAGE)
    assert told.source == "commit message" and told.issues == ("12",)
    assert told.text.startswith("Make div return a true quotient\n\ndiv(1, 2) returned 0")
    assert "Signed-off-by" not in told.text and not told.thin


def test_a_merged_pull_request_is_its_body() -> None:
    told = from_message("Merge pull request #5 from ann/feature\n\nAdd square for the areas\n")
    assert (told.text, told.source) == ("Add square for the areas", "merge body")


def test_a_thin_merge_is_told_by_its_branch() -> None:
    branch = (
        "Delay the warning about a missing plugin until collection\n\nFixes #9643\n"
        "Co-authored-by: Ann <ann@example.org>",
        "Add a changelog entry",
    )
    empty = from_message("Merge pull request #9646 from ann/9643-delay-warning\n", branch)
    assert empty.source == "branch commits" and empty.issues == ("9643",)
    assert empty.text == (
        "Delay the warning about a missing plugin until collection\n\nFixes #9643\n\n"
        "Add a changelog entry"
    )
    titled = from_message("Merge pull request #1 from ann/x\n\nDelay the warning", branch)
    assert titled.source == "merge body and branch commits"
    assert titled.text.startswith("Delay the warning\n\nDelay the warning about")
    body = "Merge pull request #1 from ann/x\n\nDelay the plugin warning until the collection ends"
    assert from_message(body, branch).source == "merge body"  # not thin: the body alone


def test_a_thin_message() -> None:
    assert from_message("fix").thin and from_message("Merge branch 'main' of x/y").text == ""
    assert not from_message(" ".join(["word"] * MIN_WORDS)).thin


def test_the_users_statement_wins(tmp_path: Path) -> None:
    path = tmp_path / "statements.jsonl"
    path.write_text('{"commit": "abcdef1", "problem_statement": "Division floors: 1/2 is 0"}\n\n')
    supplied = read_supplied(path)
    told = statement("abcdef1234", "fix\n\nCloses #3", supplied)
    assert (told.text, told.source, told.issues) == (
        "Division floors: 1/2 is 0",
        "user file",
        ("3",),
    )
    assert statement("0123456", "fix", supplied).source == "commit message"


@pytest.mark.parametrize(
    "line", ['{"commit": "abc"}', "not json", '{"commit": 1, "problem_statement": "x"}']
)
def test_a_bad_statements_file_names_its_line(tmp_path: Path, line: str) -> None:
    path = tmp_path / "statements.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(ValueError, match=f"{path}:1: "):
        read_supplied(path)
