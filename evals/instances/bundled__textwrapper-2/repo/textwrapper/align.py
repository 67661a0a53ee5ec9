"""Padding and plain-text column alignment."""

from __future__ import annotations

from typing import Iterable, Sequence

from textwrapper.width import display_width

ALIGNMENTS = ("left", "right", "center")


def pad(text: str, width: int, align: str = "left", fillchar: str = " ") -> str:
    """Pad ``text`` to ``width`` display columns; text already that wide is returned as is.

    When centring leaves an odd number of columns, the extra one goes on the right.
    """
    if align not in ALIGNMENTS:
        raise ValueError(f"unknown alignment {align!r}; expected one of {', '.join(ALIGNMENTS)}")
    if len(fillchar) != 1:
        raise ValueError("fillchar must be a single character")
    missing = width - display_width(text)
    if missing <= 0:
        return text
    if align == "left":
        return text + fillchar * missing
    if align == "right":
        return fillchar * missing + text
    left = missing // 2
    return fillchar * left + text + fillchar * (missing - left)


def column_widths(rows: Sequence[Sequence[str]]) -> list[int]:
    """The display width of the widest cell of each column (rows may be ragged)."""
    widths: list[int] = []
    for row in rows:
        for index, cell in enumerate(row):
            if index == len(widths):
                widths.append(0)
            widths[index] = max(widths[index], display_width(cell))
    return widths


def align_columns(rows: Iterable[Sequence[str]], align: Sequence[str] | None = None,
                  sep: str = "  ") -> list[str]:
    """Lay ``rows`` out as lines of aligned columns separated by ``sep``.

    ``align`` gives one alignment per column (missing entries default to ``"left"``). Trailing
    padding is stripped from each line so that output does not end in spaces.
    """
    rows = [list(row) for row in rows]
    widths = column_widths(rows)
    alignments = list(align or ())
    alignments += ["left"] * (len(widths) - len(alignments))
    lines = []
    for row in rows:
        cells = [pad(cell, widths[i], alignments[i]) for i, cell in enumerate(row)]
        lines.append(sep.join(cells).rstrip())
    return lines
