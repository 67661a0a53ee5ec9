"""What a report directory holds, read for the viewer without holding the trajectories.

``trajectories.jsonl`` can be hundreds of megabytes: one streamed pass notes where each item's
line starts, and an instance page reads back only its own lines.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..input_files import InputError, RecordError, Skipped, read_jsonl, read_parquet, scan_jsonl
from ..types import Trajectory

if TYPE_CHECKING:
    import pandas as pd

RESULTS = "results.parquet"
TRAJECTORIES = "trajectories.jsonl"
INSTANCES = "instances.jsonl"


class ReportError(Exception):
    """The directory is not a report this viewer can read."""


@dataclass(frozen=True)
class Located:
    offset: int  # byte offset of the line in trajectories.jsonl
    length: int
    line: int  # 1-based, for "the full text is on line N"


@dataclass
class TrajectoryIndex:
    """Each item's trajectory, by instance: item id -> where its line is."""

    path: Path
    by_instance: dict[str, dict[str, Located]] = field(default_factory=dict)
    skipped: Skipped | None = None  # the lines that hold no trajectory, each with why

    @classmethod
    def scan(cls, path: Path) -> TrajectoryIndex:
        """One streamed pass, each line read as every command reads a trajectory
        (``Trajectory.from_dict``): a torn line or one of the wrong shape is skipped."""
        index = cls(path, skipped=Skipped(path))
        for entry in scan_jsonl(path, _located_item, index.skipped):
            instance, item = entry.record
            located = Located(entry.offset, entry.length, entry.line)
            index.by_instance.setdefault(instance, {})[item] = located
        return index

    def read(self, located: Located) -> dict[str, Any]:
        with self.path.open("rb") as handle:
            handle.seek(located.offset)
            record: dict[str, Any] = json.loads(handle.read(located.length))
        return record


def _located_item(record: Any) -> tuple[str, str]:
    """A line's instance and item id, once the line holds a trajectory."""
    trajectory = Trajectory.from_dict(record)
    return trajectory.instance_id, trajectory_item(record)


def trajectory_item(record: dict[str, Any]) -> str:
    """A trajectory's item id, as ``ItemSpec.id`` makes it: instance, variant, trial when numbered."""
    trial = (record.get("meta") or {}).get("trial")
    return f"{record['instance_id']}-{record['variant']}" + (f"-t{trial}" if trial else "")


@dataclass(frozen=True)
class Report:
    directory: Path
    results: pd.DataFrame
    meta: dict[str, Any]
    instances: dict[str, dict[str, Any]]  # instance id -> its record (issue, test lists)
    trajectories: TrajectoryIndex
    instances_skipped: Skipped | None = None  # instances.jsonl's lines that hold none


def read_report(directory: Path) -> Report:
    directory = Path(directory)
    parquet = directory / RESULTS
    if not parquet.is_file():
        raise ReportError(
            f"{directory} holds no {RESULTS}: give the directory an A/B session wrote"
            " (--toolpolicy-report, by default reports/<model>-<dataset>-seed<N>)"
        )
    try:  # a file that cannot be read at all (a table cut short): ReportError, one line
        results = read_parquet(parquet)
        instances, skipped = read_jsonl(directory / INSTANCES, _instance)
        trajectories = TrajectoryIndex.scan(directory / TRAJECTORIES)
    except InputError as exc:
        raise ReportError(str(exc)) from None
    missing = [c for c in ("instance_id", "variant") if c not in results.columns]
    if missing:
        raise ReportError(f"{parquet}: not a results table: no column {missing[0]}")
    # Taken off the frame: pandas deep-copies ``attrs`` into every frame an operation makes,
    # which made building the decision table several times slower.
    meta = dict(results.attrs.pop("toolpolicy_meta", None) or {})
    results.attrs = {}
    return Report(directory, results, meta, dict(instances), trajectories, skipped)


def _instance(record: Any) -> tuple[str, dict[str, Any]]:
    """An ``instances.jsonl`` record by its id. Reports written before that file have none:
    their pages show each test's outcome without the FAIL_TO_PASS / PASS_TO_PASS split."""
    if not isinstance(record, dict) or not isinstance(record.get("instance_id"), str):
        raise RecordError("not an instance (no instance_id)")
    for key in ("FAIL_TO_PASS", "PASS_TO_PASS"):
        tests = record.get(key) or []
        if not isinstance(tests, list) or not all(isinstance(t, str) for t in tests):
            raise RecordError(f"{key} is not a list of test ids")
    return record["instance_id"], record
