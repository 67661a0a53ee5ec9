"""Load benchmark instances from the bundled benchmark, a local file or a `datasets` hub id."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest_toolpolicy

from ..paths import cache_dir
from .instance import Instance, InstanceError, instance_from_row

BUNDLED_DIR = Path(pytest_toolpolicy.__file__).parent.parent / "evals" / "instances"
LOCAL_BUILDERS = {".jsonl": "json", ".json": "json", ".parquet": "parquet"}
DEFAULT_SPLIT = "test"
USAGE = (
    "'bundled', 'bundled:<dir>', a local .jsonl/.json/.parquet file, "
    "or a hub id like princeton-nlp/SWE-bench_Verified[:split]"
)

# (label for errors when the id is unusable, raw row, bundled instance dir); or an error.
Row = tuple[str, dict[str, Any], Path | None]


class DatasetError(Exception):
    """A whole source cannot be read (as opposed to one broken instance in it)."""


class DatasetUnavailable(DatasetError):
    """A hub dataset cannot be fetched from here."""


@dataclass(frozen=True)
class LoadResult:
    instances: tuple[Instance, ...]
    errors: tuple[InstanceError, ...]
    notes: tuple[str, ...] = ()


def load_instances(
    source: str,
    *,
    ids: Sequence[str] | None = None,
    sample: int | None = None,
    seed: int = 0,
    require_tests: bool = True,
) -> LoadResult:
    """Every valid instance of ``source``, sorted by id; each broken one is an error instead."""
    if sample is not None and sample < 1:
        raise ValueError(f"sample must be a positive number of instances, not {sample}")
    kind = "bundled" if source == "bundled" or source.startswith("bundled:") else source
    loaded: dict[str, Instance] = {}
    errors: list[InstanceError] = []
    for item in _rows(source):
        if isinstance(item, InstanceError):
            errors.append(item)
            continue
        label, row, path = item
        try:
            instance = instance_from_row(
                row, kind, require_tests=require_tests, label=label, path=path
            )
        except InstanceError as error:
            errors.append(error)
            continue
        if instance.instance_id in loaded:
            duplicate = InstanceError(instance.instance_id, "instance_id", f"duplicate at {label}")
            errors.append(duplicate)
            continue
        loaded[instance.instance_id] = instance

    notes: list[str] = []
    chosen = sorted(loaded)
    if ids is not None:
        wanted = {ids} if isinstance(ids, str) else set(ids)
        errors = [error for error in errors if error.instance_id in wanted]
        failed = {error.instance_id for error in errors}
        for unknown in sorted(wanted - loaded.keys() - failed):
            errors.append(InstanceError(unknown, "instance_id", f"no such instance in {source}"))
        chosen = [name for name in chosen if name in wanted]
    if sample is not None:
        if sample >= len(chosen):
            notes.append(f"sample of {sample} asked, {len(chosen)} available: using all")
        else:
            chosen = sorted(random.Random(seed).sample(chosen, sample))
    return LoadResult(tuple(loaded[name] for name in chosen), tuple(errors), tuple(notes))


def _rows(source: str) -> Iterator[Row | InstanceError]:
    if source == "bundled" or source.startswith("bundled:"):
        yield from _bundled_rows(Path(source.partition(":")[2] or BUNDLED_DIR))
        return
    suffix = Path(source).suffix.lower()
    if suffix in LOCAL_BUILDERS:
        rows = _local_rows(Path(source), LOCAL_BUILDERS[suffix])
    elif source.count("/") == 1 and not source.startswith(("/", ".")):
        rows = _hub_rows(*source.partition(":")[::2])
    else:
        raise DatasetError(f"unknown dataset source {source!r}: expected {USAGE}")
    for number, row in enumerate(rows, 1):
        yield f"<row {number} of {source}>", row, None


def _bundled_rows(root: Path) -> Iterator[Row | InstanceError]:
    if not root.is_dir():
        raise DatasetError(f"bundled benchmark directory {root} does not exist")
    for directory in sorted(root.iterdir()):
        if not directory.is_dir() or directory.name.startswith((".", "_")):
            continue
        name, spec = directory.name, directory / "instance.json"
        try:
            row = json.loads(spec.read_text(encoding="utf-8"))
        except FileNotFoundError:
            yield InstanceError(name, "instance.json", f"missing in {directory}")
            continue
        except (OSError, ValueError) as error:
            yield InstanceError(name, "instance.json", f"unreadable JSON in {spec}: {error}")
            continue
        if not isinstance(row, dict):
            yield InstanceError(name, "instance.json", f"not a JSON object in {spec}")
        elif isinstance(row.get("instance_id"), str) and row["instance_id"] != name:
            found = row["instance_id"]
            yield InstanceError(name, "instance_id", f"{found!r} differs from its directory name")
        elif not (directory / "repo").is_dir():
            yield InstanceError(name, "repo/", f"no repo/ directory in {directory}")
        else:
            yield name, row, directory


def _local_rows(path: Path, builder: str) -> list[dict[str, Any]]:
    if not path.is_file():
        raise DatasetError(f"dataset file {path} does not exist")
    import datasets  # deferred: importing it costs about a second

    try:
        data = datasets.load_dataset(
            builder, data_files=str(path), split="train", cache_dir=_cache_dir()
        )
    # datasets surfaces a malformed file as many exception types (even StopIteration).
    except Exception as error:
        raise DatasetError(f"cannot read {path}: {type(error).__name__}: {error}") from error
    return data.to_list()


def _hub_rows(dataset_id: str, split: str) -> list[dict[str, Any]]:
    import datasets

    try:
        data = datasets.load_dataset(
            dataset_id, split=split or DEFAULT_SPLIT, cache_dir=_cache_dir()
        )
    # Offline, huggingface_hub retries about 20 s and raises ConnectionError/OSError subclasses.
    except OSError as error:
        raise DatasetUnavailable(
            f"dataset {dataset_id!r} cannot be fetched from the hub ({error}); "
            "use --toolpolicy-dataset bundled or a local .jsonl/.json/.parquet file"
        ) from error
    return data.to_list()


def _cache_dir() -> str:
    return str(cache_dir() / "datasets")
