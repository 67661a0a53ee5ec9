"""Where the project keeps what it caches: one root for models, embeddings, datasets and repos."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path


def cache_dir() -> Path:
    """``TOOLPOLICY_CACHE_DIR``, else ``~/.cache/pytest-toolpolicy``."""
    return Path(os.environ.get("TOOLPOLICY_CACHE_DIR") or Path.home() / ".cache/pytest-toolpolicy")


def safe_name(text: str, keep: str = "") -> str:
    """``text`` as one file name: runs of anything but letters, digits, ``_.-`` (and ``keep``)
    become ``_``."""
    return re.sub(rf"[^A-Za-z0-9_.{re.escape(keep)}-]+", "_", text)


def write_atomic(path: Path, write: Callable[[Path], object]) -> Path:
    """Write through ``write(temporary path)`` then rename: a reader, or a session killed at any
    point, never sees a half-written file. The temporary name starts with ``.tmp-``."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    os.close(fd)
    try:
        write(Path(tmp))
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
