"""A column of the decision table, declared once: its name, what it means, how it is computed,
and how it is shown.

``compute`` is a function of what the column is computed from: a variant's measured rows
(``variant_rows.VariantRows``) for the measures, or the variant judged against its reference
(``judging.Judging``) for the verdicts and statistics; it returns ``MISSING`` where the column
does not apply to the variant (the cell is left empty). ``measures.py`` and ``table.py`` compute
the table by iterating over the declarations (``columns.py`` lists them all, in order), and
``compact.py`` shows those with a ``Shown`` in the terminal's and the Markdown report's table, in
their ``place``. The HTML report and ``decision.csv`` hold every column as computed.

A new statistic is one declaration in one of ``measure_columns.py``, ``detail_columns.py``,
``verdict_columns.py`` or ``stats_columns.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import pandas as pd

From = TypeVar("From")


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing()  # the column does not apply to this variant: its cell stays empty


@dataclass(frozen=True)
class Shown:
    """How a column is shown in the compact table (terminal and Markdown)."""

    header: str
    cell: Callable[[pd.Series], str]  # the variant's row of the decision table -> its cell
    place: int  # its position among the compact table's columns, after the variant's name
    # Shown only when the table calls for it (pass^k: several trials); None: always.
    when: Callable[[pd.DataFrame], bool] | None = None


@dataclass(frozen=True)
class TableColumn(Generic[From]):
    name: str
    doc: str  # what it holds, for the reader of decision.csv and the notebook
    compute: Callable[[From], object]
    shown: Shown | None = None  # None: not in the compact table
