"""One item run inside the A/B session: an item finished in an earlier session (``--toolpolicy-
resume``) kept, or the item run and measured; its row shipped to the controller in the test
report before its record is saved, so a full or read-only disk fails the item and the row still
reaches the table, its record with it. A worker sends the record with its row (it may share no
disk with the controller, which saves it).
"""

from __future__ import annotations

import traceback
import uuid
from typing import TYPE_CHECKING, Any

import pytest

from .. import jsonsafe
from ..decide.variants import ItemSpec
from ..run.item import run_item
from ..run.row import error_row
from ..types import Trajectory

if TYPE_CHECKING:
    from .session import ABSession

ROW_PROPERTY = "toolpolicy_row"
# A finished item's whole record, sent only when the worker could not save it to disk.
RECORD_PROPERTY = "toolpolicy_record"


def run_in_session(session: ABSession, spec: ItemSpec, node: pytest.Item) -> dict[str, Any]:
    if session.settings.resume and (record := finished(session, spec.id)) is not None:
        row = {**record["row"], "resumed": True}
        _ship(session, node, row, record.get("attempt"))
        return row
    if session.unusable is not None:
        row, trajectory, failure = _unusable(session, spec)
    else:
        row, trajectory, failure = _measure(session, spec)
    row, problems = _finish(session, spec, node, row, trajectory)
    problems = [p for p in (failure, *problems) if p]
    if problems:  # the row is with the controller already: failing loses nothing
        pytest.fail(jsonsafe.escape("; ".join(problems)), pytrace=False)
    if row["status"] == "infra_error":  # the instance cannot be graded here: not a failure
        pytest.skip(jsonsafe.escape(f"{spec.id}: {row['error']}"))
    return row


def finished(session: ABSession, item_id: str) -> dict[str, Any] | None:
    """An item an earlier session finished (``--toolpolicy-resume``): its row and attempt."""
    if session.handover is not None:
        return session.handover.resumed.get(item_id)
    return session.store.load(item_id)


def _unusable(
    session: ABSession, spec: ItemSpec
) -> tuple[dict[str, Any], Trajectory | None, str | None]:
    import socket

    reason = (
        f"worker {session.worker_id} on {socket.gethostname()} cannot run items: {session.unusable}"
    )
    return (
        error_row(spec, session.row_meta, f"harness fault: {reason}"),
        None,
        f"{spec.id}: {reason}",
    )


def _measure(
    session: ABSession, spec: ItemSpec
) -> tuple[dict[str, Any], Trajectory | None, str | None]:
    """(row, trajectory, why the item fails). A harness fault, ``HarnessFault`` from a tool
    included, is the item's: recorded with its traceback, and the session goes on."""
    try:
        row, trajectory = run_item(spec, session.harness())
    except Exception as exc:
        reason = f"{type(exc).__name__}: {exc}"
        row = error_row(spec, session.row_meta, f"harness fault: {reason}")
        row["traceback"] = traceback.format_exc(limit=-12)
        return row, None, f"harness fault in {spec.id}: {reason}"
    if row["status"] == "model_error":  # the endpoint failed: measured, and reported
        return row, trajectory, f"{spec.id}: {row['error']}"
    return row, trajectory, None


def _finish(
    session: ABSession,
    spec: ItemSpec,
    node: pytest.Item,
    row: dict[str, Any],
    trajectory: Trajectory | None,
) -> tuple[dict[str, Any], list[str]]:
    """Ship the row to the controller, then save the record. (row as shipped, problems)."""
    attempt = uuid.uuid4().hex
    problems: list[str] = []
    try:
        text = session.store.encode(spec.id, row, trajectory, attempt)
    except Exception as exc:  # beyond even jsonsafe: nothing of it can be kept or measured
        reason = f"its result could not be serialized: {type(exc).__name__}: {exc}"
        row = error_row(spec, session.row_meta, reason)
        text = session.store.encode(spec.id, row, None, attempt)
        problems.append(f"{spec.id}: {reason}")
    # Before the save: a disk that is full or read-only costs the file, never the row.
    _ship(session, node, row, attempt)
    if session.is_worker:  # the controller saves it (this worker may share no disk with it)
        node.user_properties.append((RECORD_PROPERTY, text))
        return row, problems
    try:
        session.store.write(spec.id, text)
    except OSError as exc:
        node.user_properties.append((RECORD_PROPERTY, text))  # the trajectory, by report
        path = session.store.path(spec.id)
        problems.append(f"{spec.id}: could not save its result to {path}: {exc}")
    return row, problems


def _ship(session: ABSession, node: pytest.Item, row: dict[str, Any], attempt: str | None) -> None:
    node.user_properties.append((ROW_PROPERTY, jsonsafe.dumps({"row": row, "attempt": attempt})))
