"""The decision table: measures, deltas, the §9 verdicts and the paired statistics, one row per
variant.

Its columns are declared once each (``columns.py``): the measures are computed from each
variant's rows (``measures.py``), the rest by judging each variant against its reference
(``judging.py``). The verdict columns come only from the exact rules (:mod:`.decision`,
:mod:`.ablation`); the McNemar p and bootstrap intervals sit beside them for the reader and
never change them. The report files are written from it by ``report_files.py``.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from .columns import JUDGED
from .judging import Judging
from .measures import measures
from .paired import unpaired_reason
from .results import conform
from .table_column import MISSING

__all__ = ["decision_table"]


def decision_table(results: pd.DataFrame, meta: dict[str, Any] | None = None) -> pd.DataFrame:
    """One row per variant: current, policy, then the ablations (spec §9's order).

    ``meta`` is accepted for symmetry with the renderers; the table depends on ``results`` only.
    A frame that lacks schema columns (only error rows, say) is read as having them empty.
    """
    results = conform(results)
    m = measures(results)
    unpaired = unpaired_reason(results, m)
    extra = []
    for variant in m.index:
        judging = Judging(str(variant), m, results, unpaired)
        cells = {column.name: column.compute(judging) for column in JUDGED}
        extra.append({name: value for name, value in cells.items() if value is not MISSING})
    columns = [column.name for column in JUDGED]
    judged_frame = pd.DataFrame(extra, index=m.index, columns=columns, dtype=object)
    return m.join(judged_frame)
