"""A mined instance's problem statement, from its commit message (or the user's own text).

A commit message says what was changed, not always why; it is what history holds offline.
Taken from it: the subject (for a merge of a pull request, GitHub's "Merge pull request #N from
…" subject says nothing, and the pull request's title is the body's first line) and the body,
without the trailers tools add (``Signed-off-by:``, ``Co-authored-by:``…); issue text the
message quotes stays, and the issue numbers it names are recorded. A merge whose body is thin
(a pull request merged without its title, or with a title alone) is told by its branch's own
commit messages after the body, as the pull request's commits told it. What it is left with is thin
when it has fewer than ``MIN_WORDS`` words: too little to act on, and such an instance is
dropped and counted.
A statement the user supplies (a JSON Lines file of ``{"commit", "problem_statement"}``) wins.

Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..input_files import InputError, RecordError, read_jsonl

MIN_WORDS = 8
_TRAILER = re.compile(r"^[A-Z][A-Za-z-]+(?:-[Bb]y|-[Tt]o)?: \S")
_MERGE = re.compile(r"^Merge (?:pull request #\d+ from \S+|branch '[^']*'(?: of \S+)?)\s*$")
_ISSUE = re.compile(r"(?:[Ff]ix(?:es|ed)?|[Cc]lose[sd]?|[Rr]esolve[sd]?|[Rr]efs?) #(\d+)")


@dataclass(frozen=True)
class Statement:
    text: str
    # "commit message", "merge body", "merge body and branch commits", "branch commits" or
    # "user file"
    source: str
    issues: tuple[str, ...]  # issue numbers the message names ("Fixes #123")

    @property
    def words(self) -> int:
        return len(self.text.split())

    @property
    def thin(self) -> bool:
        return self.words < MIN_WORDS


def from_message(message: str, branch: Sequence[str] = ()) -> Statement:
    """The statement of a commit's ``message``; for a merge, ``branch`` holds its branch's
    commit messages, oldest first, which tell it where its body is thin."""
    lines = message.strip().splitlines()
    source = "commit message"
    if lines and _MERGE.match(lines[0]):
        lines, source = lines[1:], "merge body"
    text = _clean(lines)
    issues = _ISSUE.findall(message)
    told = Statement(text, source, ())
    if told.thin and branch:
        texts = [t for t in (_clean(m.splitlines()) for m in branch) if t]
        text = "\n\n".join([text, *texts] if text else texts)
        source = "merge body and branch commits" if told.text else "branch commits"
        issues += [i for m in branch for i in _ISSUE.findall(m)]
    return Statement(text, source, tuple(dict.fromkeys(issues)))


def _clean(lines: Sequence[str]) -> str:
    kept = [line.rstrip() for line in lines if not _TRAILER.match(line.strip())]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept).strip())


def statement(
    commit: str, message: str, supplied: Mapping[str, str] | None = None,
    branch: Sequence[str] = (),
) -> Statement:  # fmt: skip
    """The user's statement for ``commit`` (full or abbreviated id) where given, else the
    commit message's (and a thin merge's branch's)."""
    for key, text in (supplied or {}).items():
        if len(key) >= 7 and commit.startswith(key) and text.strip():
            return Statement(text.strip(), "user file", from_message(message, branch).issues)
    return from_message(message, branch)


def read_supplied(path: Path) -> dict[str, str]:
    """``{commit: problem_statement}`` from a JSON Lines file; a line without both is an
    ``InputError`` (a ``ValueError``) that names it."""
    if not path.is_file():
        raise InputError(path, "no such file")
    rows, skipped = read_jsonl(path, _supplied)
    if skipped:
        raise skipped.error()
    return {commit.strip(): text for commit, text in rows}


def _supplied(row: Any) -> tuple[str, str]:
    if not isinstance(row, dict) or "commit" not in row or "problem_statement" not in row:
        raise RecordError('expected {"commit": ..., "problem_statement": ...}')
    commit, text = row["commit"], row["problem_statement"]
    if not isinstance(commit, str) or not isinstance(text, str):
        raise RecordError("commit and problem_statement must be strings")
    return commit, text
