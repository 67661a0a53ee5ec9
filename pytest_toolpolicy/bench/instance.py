"""A benchmark instance with the SWE-bench fields, validated field by field from a raw row."""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import row_paths

_ID = re.compile(r"[A-Za-z0-9][\w.\-]*")
# An ISO date, a time after it or not (SWE-bench's "2021-09-20T17:04:23Z").
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ][0-9:.]+(?:Z|[+-]\d{2}:?\d{2})?)?")
_COMMIT = re.compile(r"[0-9a-fA-F]{7,40}")
# FAIL_TO_PASS first: for statements-only data it is the field that matters most to name.
TEST_FIELDS = ("FAIL_TO_PASS", "PASS_TO_PASS", "test_patch", "version")
BASE_FIELDS = ("instance_id", "repo", "base_commit", "problem_statement", "patch")


class InstanceError(Exception):
    """One instance cannot be used; the rest of the benchmark is unaffected."""

    def __init__(self, instance_id: str, field: str, message: str) -> None:
        super().__init__(f"instance {instance_id}: field {field}: {message}")
        self.instance_id = instance_id
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Instance:
    instance_id: str
    repo: str
    base_commit: str
    problem_statement: str
    patch: str
    test_patch: str
    FAIL_TO_PASS: tuple[str, ...]
    PASS_TO_PASS: tuple[str, ...]
    version: str
    repro_target: str | None = None
    underspecified: bool = False
    environment_setup_commit: str | None = None
    source: str = "bundled"
    path: Path | None = None
    # When the change was made (SWE-bench's ISO timestamp): a cutoff for what an environment's
    # unpinned dependencies resolve to, and for selecting instances newer than a model.
    created_at: str | None = None
    # The commit a row was mined from (``toolpolicy mine``): its environment is fitted to its
    # checkout, so it needs no spec of its version.
    mined_from: str | None = None

    @property
    def test_target(self) -> str | None:
        """What the post-patch trigger runs: ``repro_target``, else the FAIL_TO_PASS ids."""
        return self.repro_target or " ".join(self.FAIL_TO_PASS) or None


def instance_from_row(
    row: Mapping[str, Any],
    source: str,
    *,
    require_tests: bool = True,
    label: str | None = None,
    path: Path | None = None,
) -> Instance:
    """Validate ``row``; ``label`` names the instance in errors when it has no usable id."""
    fields = _Fields(row, label)
    required = BASE_FIELDS + (TEST_FIELDS if require_tests else ())
    missing = [field for field in required if row.get(field) is None]
    if missing:
        also = f" (also missing: {', '.join(missing[1:])})" if missing[1:] else ""
        hint = (
            "; load with require_tests=False for data without tests"
            if missing[0] in TEST_FIELDS
            else ""
        )
        raise fields.error(missing[0], f"missing{also}{hint}")
    underspecified = fields.flag("underspecified")
    may_lack_tests = underspecified or not require_tests
    instance = Instance(
        instance_id=fields.text("instance_id", check=row_paths.id_problem, pattern=_ID),
        repo=fields.text("repo", check=row_paths.repo_problem),
        base_commit=fields.text("base_commit", pattern=_COMMIT),
        problem_statement=fields.text("problem_statement"),
        patch=fields.text("patch", empty_ok=underspecified, check=row_paths.patch_problem),
        test_patch=fields.text(
            "test_patch", empty_ok=may_lack_tests, check=row_paths.patch_problem
        ),
        FAIL_TO_PASS=fields.test_ids("FAIL_TO_PASS"),
        PASS_TO_PASS=fields.test_ids("PASS_TO_PASS"),
        version=fields.text("version", empty_ok=not require_tests, check=row_paths.version_problem),
        repro_target=fields.text("repro_target") or None,
        underspecified=underspecified,
        environment_setup_commit=fields.text("environment_setup_commit", pattern=_COMMIT) or None,
        source=source,
        path=path,
        created_at=fields.date("created_at"),
        mined_from=fields.text("mined_from", pattern=_COMMIT) or None,
    )
    if not instance.FAIL_TO_PASS and not may_lack_tests:
        raise fields.error("FAIL_TO_PASS", "empty (only an under-specified instance has no tests)")
    return instance


class _Fields:
    """Reads one raw row, turning each bad value into an InstanceError naming it."""

    def __init__(self, row: Mapping[str, Any], label: str | None) -> None:
        self.row = row
        raw_id = row.get("instance_id")
        # An id that cannot be printed on one line, or would flood it, is named by the row's
        # label instead (its error shows the id, cut).
        raw = raw_id if isinstance(raw_id, str) else ""
        if raw and raw.isprintable() and len(raw) <= 2 * row_paths.MAX_ID_BYTES:
            self.name = raw
        else:
            self.name = label or (_show(raw) if raw else "?")

    def error(self, field: str, message: str) -> InstanceError:
        return InstanceError(self.name, field, message)

    def date(self, field: str) -> str | None:
        """An ISO date or timestamp, in UTC without its zone: one text whether the loader
        read it as text ("2023-03-04T18:36:21Z") or as a datetime (``datasets`` does)."""
        value = self.row.get(field)
        if value is not None and not isinstance(value, str) and hasattr(value, "isoformat"):
            value = str(value.isoformat())
        elif value is not None:
            value = self.text(field, pattern=_DATE)
        if not value:
            return None
        try:
            when = datetime.datetime.fromisoformat(value)
        except ValueError:
            raise self.error(field, f"not an ISO date ({_show(value)})") from None
        if when.tzinfo is not None:
            when = when.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return when.isoformat()

    def text(
        self,
        field: str,
        *,
        empty_ok: bool = False,
        pattern: re.Pattern[str] | None = None,
        check: Callable[[str], str | None] | None = None,
    ) -> str:
        """The field's text; ``check`` gives why a value cannot be used where it goes (a file
        name, a path in the repository), before ``pattern`` says only "malformed"."""
        value = self.row.get(field)
        if value is None:
            return ""
        if not isinstance(value, str):
            raise self.error(field, f"not a string ({type(value).__name__} {_show(value)})")
        if not value and not empty_ok:
            raise self.error(field, "empty")
        if not _is_unicode(value):
            # It could not be written to the workspace, a prompt or a report.
            raise self.error(field, "not valid Unicode text (a lone surrogate)")
        if value and check and (problem := check(value)):
            raise self.error(field, problem)
        if value and pattern and not pattern.fullmatch(value):
            raise self.error(field, f"malformed ({_show(value)})")
        return value

    def flag(self, field: str) -> bool:
        value = self.row.get(field)
        if value is not None and not isinstance(value, bool):
            raise self.error(field, f"not a boolean ({_show(value)})")
        return bool(value)

    def test_ids(self, field: str) -> tuple[str, ...]:
        """A list of test ids, given as a list or, as the dataset ships it, a JSON-encoded string."""
        value = self.row.get(field)
        if value is None:
            return ()
        decoded = value
        if isinstance(value, str):
            try:
                decoded = json.loads(value)
            except ValueError:
                decoded = None
            if not isinstance(decoded, list):
                raise self.error(field, f"not a JSON list of test ids ({_show(value)})")
        if not isinstance(decoded, (list, tuple)) or not all(
            isinstance(t, str) and t.strip() and _is_unicode(t) for t in decoded
        ):
            raise self.error(field, f"not a list of test ids ({_show(value)})")
        for test_id in decoded:
            if problem := row_paths.test_id_problem(test_id):
                raise self.error(field, f"a test id {problem}")
        return tuple(decoded)


def _is_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _show(value: object, limit: int = 60) -> str:
    shown = repr(value)
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."
