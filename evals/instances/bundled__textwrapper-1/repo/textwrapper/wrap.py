"""Greedy word wrapping with optional hyphenation of words longer than a line.

Widths are counted in characters. Whitespace between words is collapsed to single spaces.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class _LineFiller:
    """Accumulates words into lines no wider than ``width`` (prefix included)."""

    width: int
    indent: str = ""
    subsequent_indent: str = ""
    hyphenate: bool = False
    hyphen: str = "-"
    lines: list[str] = field(default_factory=list)
    _words: list[str] = field(default_factory=list)

    def capacity(self) -> int:
        """Characters available for words on the line being filled."""
        return self.width - len(self._prefix())

    def add_word(self, word: str) -> None:
        """Place ``word`` on the current line, or start a new one, or break the word."""
        if self._fits(word):
            self._words.append(word)
            return
        self.end_line()
        if len(word) <= self.capacity() or not self.hyphenate:
            self._words.append(word)
        else:
            self._add_broken_word(word)

    def end_line(self) -> None:
        """Close the current line if it has any words."""
        if self._words:
            self.lines.append(self._prefix() + " ".join(self._words))
            self._words = []

    def _prefix(self) -> str:
        """The indent of the line being filled."""
        return self.subsequent_indent if self.lines else self.indent

    def _fits(self, word: str) -> bool:
        used = sum(len(w) + 1 for w in self._words)
        return used + len(word) <= self.capacity()

    def _add_broken_word(self, word: str) -> None:
        """Put ``word`` on fresh lines, cut with ``hyphen`` wherever a line is full."""
        rest = word
        while len(rest) > self.capacity():
            take = self.capacity() - len(self.hyphen)
            self._words.append(rest[:take] + self.hyphen)
            self.end_line()
            rest = rest[take:]
        self._words.append(rest)


def wrap(text: str, width: int = 70, *, indent: str = "", subsequent_indent: str = "",
         hyphenate: bool = False, hyphen: str = "-") -> list[str]:
    """Wrap ``text`` into lines of at most ``width`` characters.

    ``indent`` prefixes the first line and ``subsequent_indent`` the others; both count towards
    ``width``. A word longer than a whole line is left on a line of its own (overflowing it)
    unless ``hyphenate`` is set, in which case it is broken with ``hyphen``.
    """
    if width <= max(len(indent), len(subsequent_indent)) + len(hyphen) + 1:
        raise ValueError(f"width {width} leaves no room for text after the indent")
    filler = _LineFiller(width, indent, subsequent_indent, hyphenate, hyphen)
    for word in text.split():
        filler.add_word(word)
    filler.end_line()
    return filler.lines


def fill(text: str, width: int = 70, **options) -> str:
    """Like :func:`wrap`, joined with newlines."""
    return "\n".join(wrap(text, width, **options))
