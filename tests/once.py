"""Expensive session setup made once per test run, not once per xdist worker."""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest


def made_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]
) -> Path:
    """The directory ``make`` fills, made by the first worker that asks and reused by the others
    (xdist's workers share the parent of their base temporary directories; without xdist this is
    an ordinary per-session directory). A worker that asks meanwhile waits for it. A ``make``
    that raises leaves nothing behind: the next one to ask makes it again (and fails its own way).
    The directory is read-only by convention: the tests that share it only read it."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    root = base / f"once-{name}"
    with open(base / f"once-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (root / ".made").exists():
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir()
            try:
                make(root)
            except BaseException:
                shutil.rmtree(root, ignore_errors=True)
                raise
            (root / ".made").touch()
    return root
