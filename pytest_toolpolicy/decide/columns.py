"""Every column of the decision table, in its order: one declaration each (``table_column.py``).

First those computed from a variant's measured rows (``measure_columns.py``,
``detail_columns.py``), then those computed by judging it against its reference
(``verdict_columns.py``, ``stats_columns.py``).
"""

from __future__ import annotations

from typing import Any

from .judging import Judging
from .measures import PER_VARIANT
from .stats_columns import STATS_COLUMNS
from .table_column import TableColumn
from .verdict_columns import VERDICT_COLUMNS

JUDGED: tuple[TableColumn[Judging], ...] = (*VERDICT_COLUMNS, *STATS_COLUMNS)
TABLE_COLUMNS: tuple[TableColumn[Any], ...] = (*PER_VARIANT, *JUDGED)
