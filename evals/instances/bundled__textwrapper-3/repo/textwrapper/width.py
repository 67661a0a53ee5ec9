"""How many terminal columns a string occupies."""

from __future__ import annotations

import unicodedata

_WIDE = frozenset({"W", "F"})


def char_width(char: str) -> int:
    """Columns taken by one character: 2 for East Asian wide, else 1."""
    if unicodedata.east_asian_width(char) in _WIDE:
        return 2
    return 1


def display_width(text: str) -> int:
    """Columns taken by ``text`` on a terminal (or in a monospaced font)."""
    return sum(char_width(char) for char in text)
