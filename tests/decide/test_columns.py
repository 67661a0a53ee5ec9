"""The decision table's columns are declared once each (``decide/columns.py``): the table, its
measures and its compact rendering iterate over the declarations."""

from __future__ import annotations

import pandas as pd
import pytest

from pytest_toolpolicy.decide import measures as measures_module
from pytest_toolpolicy.decide.columns import JUDGED, TABLE_COLUMNS
from pytest_toolpolicy.decide.compact import COMPACT, compact_header, compact_rows
from pytest_toolpolicy.decide.measures import PER_VARIANT, measures
from pytest_toolpolicy.decide.table import decision_table
from pytest_toolpolicy.decide.table_column import Shown, TableColumn
from pytest_toolpolicy.decide.variant_rows import VariantRows

from .results_factory import frame, variant_rows


def results() -> pd.DataFrame:
    return frame(
        variant_rows("current", [True, False, True])
        + variant_rows("policy", [True, True, True], cost_usd=0.12)
        + variant_rows("policy-no:trigger.test", [True, False, True])
    )


def test_the_table_has_the_declared_columns_in_their_order() -> None:
    names = [column.name for column in TABLE_COLUMNS]
    assert len(names) == len(set(names))
    assert list(decision_table(results()).columns) == names
    assert [c.name for c in PER_VARIANT] + [c.name for c in JUDGED] == names


def test_every_column_says_what_it_holds() -> None:
    assert all(column.doc.strip() for column in TABLE_COLUMNS)


def test_the_compact_table_shows_the_declared_cells_in_their_places() -> None:
    shown = [c.shown for c in TABLE_COLUMNS if c.shown is not None]
    assert len({s.place for s in shown}) == len(shown)
    assert COMPACT == (
        "arm/variant", "resolve", "$/inst", "tok/inst", "call-prec", "sel-acc", "abstain",
        "false-abst",
    )  # fmt: skip
    table = decision_table(results())
    assert compact_header(table) == list(COMPACT)  # one trial, no endpoint error
    assert compact_rows(table)[1][:2] == ["policy", "1.000 (3/3)"]


def test_a_new_statistic_is_one_declaration(monkeypatch: pytest.MonkeyPatch) -> None:
    """Declared once, it is computed per variant and shown in the compact table."""
    longest = TableColumn[VariantRows](
        "longest_run",
        "the most turns an item took",
        lambda v: int(v.ok["turns"].max()),
        Shown("turns", lambda r: str(r["longest_run"]), place=10),
    )
    added = (*PER_VARIANT, longest)
    monkeypatch.setattr(measures_module, "PER_VARIANT", added)
    monkeypatch.setattr(measures_module, "COLUMNS", tuple(c.name for c in added))
    monkeypatch.setattr("pytest_toolpolicy.decide.compact.TABLE_COLUMNS", (*TABLE_COLUMNS, longest))
    m = measures(results().assign(turns=[3, 4, 5, 6, 7, 8, 9, 10, 11]))
    assert m["longest_run"].tolist() == [5, 8, 11]
    table = decision_table(results().assign(turns=[3, 4, 5, 6, 7, 8, 9, 10, 11]))
    assert compact_header(table)[-1] == "turns"
    assert [row[-1] for row in compact_rows(table)] == ["5", "8", "11"]
