"""The compact table of the terminal summary and ``decision.md``: a row per variant, the columns
whose declaration says how they are shown (``Shown``), in their places.
"""

from __future__ import annotations

import pandas as pd

from .columns import TABLE_COLUMNS
from .sample import NONE, OWN
from .table_column import Shown

VARIANT = "arm/variant"  # the first column: the variant's name
# The columns always shown; pass^k (several trials) and endpoint-err (items the endpoint ended)
# only when the table calls for them.
COMPACT = (
    VARIANT,
    *(
        s.header
        for s in sorted((c.shown for c in TABLE_COLUMNS if c.shown), key=lambda s: s.place)
        if s.when is None
    ),
)
# A row not on the shared sample says so where it is read first: its name.
SAMPLE_LABELS = {OWN: " (own items, unpaired)", NONE: " (none measured)"}


def shown_columns(table: pd.DataFrame) -> list[Shown]:
    """The declared columns this table shows, in their places."""
    shown = [c.shown for c in TABLE_COLUMNS if c.shown is not None]
    return sorted((s for s in shown if s.when is None or s.when(table)), key=lambda s: s.place)


def compact_header(table: pd.DataFrame) -> list[str]:
    return [VARIANT, *(s.header for s in shown_columns(table))]


def compact_rows(table: pd.DataFrame) -> list[list[str]]:
    shown = shown_columns(table)
    return [
        [
            str(variant) + SAMPLE_LABELS.get(str(r.get("sample")), ""),
            *(s.cell(r) for s in shown),
        ]
        for variant, r in table.iterrows()
    ]


def aligned(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]
