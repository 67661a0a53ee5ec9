"""What a report directory holds, read for the viewer without holding the trajectories.

``trajectories.jsonl`` can be hundreds of megabytes: one streamed pass notes where each item's
line starts, and an instance page reads back only its own lines.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
    unreadable: list[str] = field(default_factory=list)  # lines that are not a trajectory

    @classmethod
    def scan(cls, path: Path) -> TrajectoryIndex:
        index = cls(path)
        if not path.is_file():
            return index
        offset = 0
        with path.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                if raw.strip():
                    try:
                        record = json.loads(raw)
                        instance = str(record["instance_id"])
                        item = trajectory_item(record)
                    except (ValueError, KeyError, TypeError) as exc:
                        index.unreadable.append(f"line {number}: {exc}")
                    else:
                        located = Located(offset, len(raw), number)
                        index.by_instance.setdefault(instance, {})[item] = located
                offset += len(raw)
        return index

    def read(self, located: Located) -> dict[str, Any]:
        with self.path.open("rb") as handle:
            handle.seek(located.offset)
            record: dict[str, Any] = json.loads(handle.read(located.length))
        return record


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


def read_report(directory: Path) -> Report:
    import pandas as pd

    directory = Path(directory)
    parquet = directory / RESULTS
    if not parquet.is_file():
        raise ReportError(
            f"{directory} holds no {RESULTS}: give the directory an A/B session wrote"
            " (--toolpolicy-report, by default reports/<model>-<dataset>-seed<N>)"
        )
    try:
        results = pd.read_parquet(parquet)
    except (OSError, ValueError) as exc:
        raise ReportError(f"{parquet} cannot be read: {exc}") from None
    # Taken off the frame: pandas deep-copies ``attrs`` into every frame an operation makes,
    # which made building the decision table several times slower.
    meta = dict(results.attrs.pop("toolpolicy_meta", None) or {})
    results.attrs = {}
    return Report(
        directory,
        results,
        meta,
        dict(_instances(directory / INSTANCES)),
        TrajectoryIndex.scan(directory / TRAJECTORIES),
    )


def _instances(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """Reports written before ``instances.jsonl`` have none: their pages show each test's
    outcome without the FAIL_TO_PASS / PASS_TO_PASS split."""
    if not path.is_file():
        return
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            try:
                record = json.loads(line)
                yield str(record["instance_id"]), record
            except (ValueError, KeyError, TypeError):
                continue
