"""The JSON records and the lock beside the built environments (``layout.py`` says where).

A venv's scripts hold absolute paths, so an environment is built in place, under a per-name
``flock`` (``lock``), not in a temporary directory renamed into place; a record is written
atomically (``write_json``), so a reader sees all of it or none. A failed build or base-commit
layer is remembered as ``failure_record`` (the error, the spec key, the time, the commit),
and later calls report it at once as ``remembered`` says, until a rebuild.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..paths import write_atomic
from .spec import EnvSpec


@contextlib.contextmanager
def lock(root: Path, name: str) -> Iterator[None]:
    # A lock, not a rename: a venv's scripts hold its absolute path, and it is slow to build.
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f".{name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_json(path: Path, data: Mapping[str, Any]) -> None:
    text = json.dumps(data, indent=1, sort_keys=True)
    write_atomic(path, lambda tmp: _write_text(tmp, text))


def _write_text(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


def remembered(what: str, failed: Mapping[str, Any]) -> str:
    return (
        f"{what} failed to build at {failed.get('time', '?')}: {failed.get('error')} "
        "(remembered; rebuild=True or `toolpolicy envs build --rebuild` tries again)"
    )


def failure_record(exc: Exception, spec: EnvSpec, commit: str) -> dict[str, str]:
    record = {"error": str(exc), "spec_key": spec.key(), "spec": spec.describe()}
    return record | {"time": time.strftime("%Y-%m-%d %H:%M:%S"), "commit": commit}
