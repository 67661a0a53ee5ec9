"""Where the project keeps what it caches: one root for models, embeddings, datasets and repos."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """``TOOLPOLICY_CACHE_DIR``, else ``~/.cache/pytest-toolpolicy``."""
    return Path(os.environ.get("TOOLPOLICY_CACHE_DIR") or Path.home() / ".cache/pytest-toolpolicy")
