"""The controller's aggregation: each item's row as it arrives in a test report (a worker's record
saved), the session's results frame, the rows of the report directory's other records
(``--toolpolicy-resume``, a ``-k`` run), and the trajectories of the rows reported.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from ..decide.variants import item_of
from .item_run import RECORD_PROPERTY, ROW_PROPERTY

if TYPE_CHECKING:  # the controller builds the table; a worker never imports pandas (~1 s)
    import pandas as pd

    from .session import ABSession


def collect(session: ABSession, report: pytest.TestReport) -> None:
    for name, value in report.user_properties:
        if not isinstance(value, str):  # ours are JSON text; pytest types them as object
            continue
        if name == ROW_PROPERTY:
            shipped = json.loads(value)
            row = shipped["row"]
            item_id = item_of(row)
            session.rows[item_id] = row
            session.attempts[item_id] = shipped.get("attempt")
        elif name == RECORD_PROPERTY:
            _save(session, value)
    # Saved now: the record need not stay on the report (a JUnit XML file, say).
    report.user_properties = [p for p in report.user_properties if p[0] != RECORD_PROPERTY]


def _save(session: ABSession, text: str) -> None:
    """A worker's record, saved by the controller; one it cannot save stays in memory
    (its trajectory still reaches the report) and the summary says why."""
    record = json.loads(text)
    try:
        session.store.write(record["item"], text)
    except OSError as exc:
        session.shipped[record["item"]] = record
        session.save_errors.append(
            f"{record['item']}: could not save its result to {session.store.path(record['item'])}: {exc}"
        )


def results_of(session: ABSession) -> pd.DataFrame:
    """This session's rows (resumed ones included), in item order. Without
    ``--toolpolicy-resume`` never an earlier session's leftovers from the report directory;
    with it, the report directory's every record (``earlier``), this session's rows
    replacing those of the same items."""
    from ..decide.results import results_frame

    rows = {**session.earlier(), **session.rows} if session.settings.resume else session.rows
    order = {spec.id: n for n, spec in enumerate(session.specs())}
    ordered = sorted(rows.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0]))
    return results_frame(row for _, row in ordered)


def earlier_rows(session: ABSession) -> dict[str, dict[str, Any]]:
    """The rows of the report directory's records that this session did not run (a ``-k``
    run leaves the others' as an earlier session wrote them), each marked resumed and tied
    to its record's attempt, so that its trajectory reaches the report too. A file that
    cannot be read is named in ``unreadable`` and left out."""
    found, session.unreadable = session.store.rows()
    earlier = {item_id: rec for item_id, rec in found.items() if item_id not in session.rows}
    rows = {item_id: {**row, "resumed": True} for item_id, (row, _) in earlier.items()}
    session.attempts |= {item_id: attempt for item_id, (_, attempt) in earlier.items()}
    return rows


def trajectories_of(session: ABSession, ids: list[str]) -> list[dict[str, Any]]:
    """The trajectories of these items' rows: the record written by the same attempt (a
    file an earlier session left, or one whose save failed, is not this row's)."""
    out = []
    for item_id in ids:
        record = session.shipped.get(item_id) or session.store.read(item_id)
        if record is None or record.get("attempt") != session.attempts.get(item_id):
            continue
        if record.get("trajectory"):
            out.append(record["trajectory"])
    return out
