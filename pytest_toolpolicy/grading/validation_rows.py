"""The validation rows ``toolpolicy validate`` records (``coverage.record_row``), read back with
each field checked: a row of the wrong shape is a ``RecordError`` naming the field, never a
crash of the coverage that reads it."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from ..input_files import RecordError, Skipped, read_jsonl
from .validate import ValidationRow


def validation_row(data: Any) -> ValidationRow:
    """A recorded validation row (``grading/coverage.record_row`` writes them), its fields
    checked: ``RecordError`` for one of the wrong type, which the coverage would trip on."""
    if not isinstance(data, dict):
        raise RecordError("not a validation row (not a JSON object)")
    if "category" not in data:  # written before rows said which of the three they are
        failed = (
            "infra_error" if "infra_error" in (data.get("gold"), data.get("empty")) else "failed"
        )
        data = {**data, "category": "validated" if data.get("ok") is True else failed}
    kinds = {f.name: f.type for f in dataclasses.fields(ValidationRow)}
    known = {k: v for k, v in data.items() if k in kinds}
    for name, value in known.items():
        wanted = _KINDS.get(str(kinds[name]), (str,))
        if not isinstance(value, wanted) or (isinstance(value, bool) and bool not in wanted):
            raise RecordError(
                f"not a validation row ({name} is {type(value).__name__}, not {kinds[name]})"
            )
    try:
        return ValidationRow(**known)
    except TypeError as exc:  # a field missing
        raise RecordError(f"not a validation row ({exc})") from None


# The types of ValidationRow's fields, as dataclasses.fields gives them (as strings).
_KINDS: dict[str, tuple[type, ...]] = {"bool": (bool,), "float": (int, float)}


def recorded_rows(log: Path) -> tuple[list[ValidationRow], Skipped]:
    """The validation rows recorded in ``log``, the latest per instance, and the lines that
    held none."""
    recorded, skipped = read_jsonl(log, validation_row)
    return list({row.instance_id: row for row in recorded}.values()), skipped
