"""A Markdown (GitHub-flavoured) table renderer."""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from textwrapper.align import ALIGNMENTS, cell_text, pad
from textwrapper.width import display_width

_MIN_RULE = 3


def render_table(headers: Sequence[Any], rows: Iterable[Sequence[Any]],
                 align: Sequence[str] | None = None) -> str:
    """Render a Markdown table whose columns line up in a monospaced font.

    Pipes inside cells are escaped and newlines become spaces. Short rows are padded with empty
    cells; a row longer than the header is an error.
    """
    header = [_cell_text(cell) for cell in headers]
    body = [_normalise_row(row, len(header)) for row in rows]
    alignments = _alignments(align, len(header))
    widths = [
        max([_MIN_RULE, display_width(header[i])] + [display_width(row[i]) for row in body])
        for i in range(len(header))
    ]
    lines = [_render_row(header, widths, alignments), _render_rule(widths, alignments)]
    lines += [_render_row(row, widths, alignments) for row in body]
    return "\n".join(lines) + "\n"


def _cell_text(cell: Any) -> str:
    """The Markdown text of one cell."""
    return cell_text(cell).replace("|", "\\|").replace("\r\n", " ").replace("\n", " ")


def _normalise_row(row: Sequence[Any], columns: int) -> list[str]:
    if len(row) > columns:
        raise ValueError(f"row has {len(row)} cells but the table has {columns} columns: {row!r}")
    cells = [_cell_text(cell) for cell in row]
    return cells + [""] * (columns - len(cells))


def _alignments(align: Sequence[str] | None, columns: int) -> list[str]:
    alignments = list(align or ["left"] * columns)
    if len(alignments) != columns:
        raise ValueError(f"{len(alignments)} alignments given for {columns} columns")
    for alignment in alignments:
        if alignment not in ALIGNMENTS:
            raise ValueError(f"unknown alignment {alignment!r}")
    return alignments


def _render_row(cells: Sequence[str], widths: Sequence[int], alignments: Sequence[str]) -> str:
    padded = (pad(cell, width, alignment) for cell, width, alignment
              in zip(cells, widths, alignments, strict=True))
    return "| " + " | ".join(padded) + " |"


def _render_rule(widths: Sequence[int], alignments: Sequence[str]) -> str:
    """The delimiter row: ``:---`` left, ``---:`` right, ``:---:`` centre."""
    rules = []
    for width, alignment in zip(widths, alignments, strict=True):
        if alignment == "left":
            rules.append(":" + "-" * (width - 1))
        elif alignment == "right":
            rules.append("-" * (width - 1) + ":")
        else:
            rules.append(":" + "-" * (width - 2) + ":")
    return "| " + " | ".join(rules) + " |"
