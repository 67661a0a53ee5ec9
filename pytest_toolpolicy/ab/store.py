"""Each finished item's row and trajectory, written atomically the moment it finishes.

One file per item (``items/<item id>.json``): written to a temporary name in the same directory
and renamed, so a session killed at any point leaves every finished item whole and none half
written. ``--toolpolicy-resume`` reads them back and skips those items.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from ..types import Trajectory


class ItemStore:
    def __init__(self, directory: Path) -> None:
        self.directory = directory / "items"

    def path(self, item_id: str) -> Path:
        return self.directory / f"{re.sub(r'[^A-Za-z0-9_.:-]+', '_', item_id)}.json"

    def save(self, item_id: str, row: dict[str, Any], trajectory: Trajectory | None) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        record = {
            "item": item_id,
            "row": row,
            "trajectory": trajectory.to_dict() if trajectory else None,
        }
        text = json.dumps(record, ensure_ascii=False, default=str, allow_nan=True)
        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.path(item_id))
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def load(self, item_id: str) -> dict[str, Any] | None:
        """A finished item's record, or None (missing, unreadable, or a harness fault to retry)."""
        try:
            record = json.loads(self.path(item_id).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if record.get("row", {}).get("status") != "ok":
            return None
        return record

    def clear(self) -> None:
        if self.directory.is_dir():
            for path in self.directory.glob("*.json"):  # pathlib's * matches dotfiles too
                path.unlink()

    def sweep(self) -> None:
        """Drop what a write cut short by a crash left (never a finished item)."""
        if self.directory.is_dir():
            for path in self.directory.glob(".tmp-*"):
                path.unlink(missing_ok=True)
