"""What an issue text points at: traceback frames, dotted names and identifiers in its prose.

Prose is the text outside tracebacks and code blocks (fenced, or indented four spaces), with
inline code kept: a name the reporter wrote in a sentence points at code, a name inside a pasted
repro or an import line does not (every repro imports the package). Tracebacks are read apart,
frame by frame (CPython's ``File "...", line N, in f`` and pytest's ``path.py:N: in f``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..primitives.symbols import symbol_spans

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A name right before "(", read once over the prose (``\b`` on both sides, as a search for
# ``\bword\(`` per word would have it: the name is a whole identifier).
_CALLED = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\(")
_INLINE = re.compile(r"`([^`\n]+)`")
_FRAME = re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<func>[\w<>]+)')
_PYTEST_FRAME = re.compile(r"^(?P<path>[\w./\\-]+\.py):(?P<line>\d+): in (?P<func>\w+)", re.M)
_TRACEBACK = re.compile(r"^\s*Traceback \(most recent call last\):")
_CHAINED = ("During handling of", "The above exception", "Traceback (most recent")
_IMPORT = re.compile(r"^\s*(?:>>>\s*)?(?:from\s+\S+\s+)?import\s")
_FILE_SUFFIXES = frozenset({"py", "pyi", "txt", "cfg", "toml", "ini", "rst", "md", "json", "yml"})


@dataclass(frozen=True)
class Frame:
    path: str
    line: int
    function: str


@dataclass(frozen=True)
class Pointers:
    frames: tuple[Frame, ...]  # in the order printed: the innermost call last
    dotted: tuple[str, ...]  # dotted names in the prose, each once
    words: frozenset[str]  # identifiers in the prose that read as code (see ``_code_like``)


def pointers(text: str) -> Pointers:
    frames = [
        Frame(m["path"].replace("\\", "/"), int(m["line"]), m["func"])
        for pattern in (_FRAME, _PYTEST_FRAME)
        for m in pattern.finditer(text)
    ]
    prose = _prose(text)
    dotted = [
        token
        for line in prose.splitlines()
        if not _IMPORT.match(line)
        for token in (line[lo:hi] for lo, hi in symbol_spans(line))
        if token.rsplit(".", 1)[-1] not in _FILE_SUFFIXES
    ]
    words = {w for span in _INLINE.findall(prose) for w in _WORD.findall(span)}
    called = set(_CALLED.findall(prose))
    words |= {w for w in _WORD.findall(_INLINE.sub(" ", prose)) if _code_like(w, called)}
    return Pointers(tuple(frames), tuple(dict.fromkeys(dotted)), frozenset(words))


def _code_like(word: str, called: set[str]) -> bool:
    """An identifier outside backticks reads as code when it could not be an English word:
    an underscore, a capital inside it, or a call (``word(``: ``called`` holds the names the
    prose calls, found in one pass)."""
    return "_" in word.strip("_") or any(c.isupper() for c in word[1:]) or word in called


def _prose(text: str) -> str:
    """``text`` without its tracebacks and code blocks."""
    kept: list[str] = []
    fence: str | None = None
    in_traceback = False
    for line in text.splitlines():
        stripped = line.strip()
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
            continue
        if stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
            continue
        if _TRACEBACK.match(line):
            in_traceback = True
            continue
        if in_traceback:
            # Frames and source lines are indented; the exception line that ends the block
            # is not (it is part of the traceback, not prose).
            if not line[:1].isspace() and stripped and not stripped.startswith(_CHAINED):
                in_traceback = False
            continue
        if line.startswith(("    ", "\t")) or stripped.startswith(">>>"):
            continue
        kept.append(line)
    return "\n".join(kept)
