"""A mined instance's problem statement, from its commit message (or the user's own text).

A commit message says what was changed, not always why; it is what history holds offline.
Taken from it: the subject (for a merge of a pull request, GitHub's "Merge pull request #N from
…" subject says nothing, and the pull request's title is the body's first line) and the body,
without the trailers tools add (``Signed-off-by:``, ``Co-authored-by:``…); issue text the
message quotes stays, and the issue numbers it names are recorded. What it is left with is thin
when it has fewer than ``MIN_WORDS`` words: too little to act on, and such an instance is
dropped and counted.
A statement the user supplies (a JSON Lines file of ``{"commit", "problem_statement"}``) wins.

Pure functions.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

MIN_WORDS = 8
_TRAILER = re.compile(r"^[A-Z][A-Za-z-]+(?:-[Bb]y|-[Tt]o)?: \S")
_MERGE = re.compile(r"^Merge (?:pull request #\d+ from \S+|branch '[^']*'(?: of \S+)?)\s*$")
_ISSUE = re.compile(r"(?:[Ff]ix(?:es|ed)?|[Cc]lose[sd]?|[Rr]esolve[sd]?|[Rr]efs?) #(\d+)")


@dataclass(frozen=True)
class Statement:
    text: str
    source: str  # "commit message", "merge body" or "user file"
    issues: tuple[str, ...]  # issue numbers the message names ("Fixes #123")

    @property
    def words(self) -> int:
        return len(self.text.split())

    @property
    def thin(self) -> bool:
        return self.words < MIN_WORDS


def from_message(message: str) -> Statement:
    lines = message.strip().splitlines()
    source = "commit message"
    if lines and _MERGE.match(lines[0]):
        lines, source = lines[1:], "merge body"
    kept = [line.rstrip() for line in lines if not _TRAILER.match(line.strip())]
    text = "\n".join(kept).strip()
    text = re.sub(r"\n{3,}", "\n\n", text)
    return Statement(text, source, tuple(dict.fromkeys(_ISSUE.findall(message))))


def statement(commit: str, message: str, supplied: Mapping[str, str] | None = None) -> Statement:
    """The user's statement for ``commit`` (full or abbreviated id) where given, else the
    commit message's."""
    for key, text in (supplied or {}).items():
        if len(key) >= 7 and commit.startswith(key) and text.strip():
            return Statement(text.strip(), "user file", from_message(message).issues)
    return from_message(message)


def read_supplied(path: Path) -> dict[str, str]:
    """``{commit: problem_statement}`` from a JSON Lines file; a line without both is an error
    that names it."""
    found: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            commit, text = row["commit"], row["problem_statement"]
        except (ValueError, KeyError, TypeError):
            raise ValueError(
                f'{path}:{number}: expected {{"commit": ..., "problem_statement": ...}}'
            ) from None
        if not isinstance(commit, str) or not isinstance(text, str):
            raise ValueError(f"{path}:{number}: commit and problem_statement must be strings")
        found[commit.strip()] = text
    return found
