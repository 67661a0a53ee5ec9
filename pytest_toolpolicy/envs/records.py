"""The JSON records and the lock beside the built environments (``layout.py`` says where).

A venv's scripts hold absolute paths, so an environment is built in place, under a per-name
``flock`` (``lock``), not in a temporary directory renamed into place; a record is written
atomically (``write_json``), so a reader sees all of it or none. A failed build or base-commit
layer is remembered as ``failure_record`` (the error, the spec key, the time, the commit, the
builder that failed), and later calls report it at once as ``remembered`` says, until a rebuild
or until another builder (``builder_digest``: a new release or a fix of this package's build
code) reads it (``still_failing``): what one builder could not build, the next may.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
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
    record["builder"] = builder_digest()
    return record | {"time": time.strftime("%Y-%m-%d %H:%M:%S"), "commit": commit}


def still_failing(failed: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """A remembered failure, if this builder made it (else None: try again)."""
    return failed if failed is not None and failed.get("builder") == builder_digest() else None


@functools.cache
def builder_digest() -> str:
    """The build code's fingerprint: the bytes of this package's ``envs`` modules."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]
