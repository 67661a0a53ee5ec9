"""Each finished item's row and trajectory, written atomically the moment it finishes.

One file per item (``items/<item id>.json``): written to a temporary name in the same directory
and renamed, so a session killed at any point leaves every finished item whole and none half
written. ``--toolpolicy-resume`` reads them back and skips those items.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..paths import safe_name, write_atomic
from ..types import Trajectory


class ItemStore:
    def __init__(self, directory: Path) -> None:
        self.directory = directory / "items"

    def path(self, item_id: str) -> Path:
        return self.directory / f"{safe_name(item_id, keep=':')}.json"

    def save(self, item_id: str, row: dict[str, Any], trajectory: Trajectory | None) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        record = {
            "item": item_id,
            "row": row,
            "trajectory": trajectory.to_dict() if trajectory else None,
        }
        text = json.dumps(record, ensure_ascii=False, default=str, allow_nan=True)
        write_atomic(self.path(item_id), lambda p: p.write_text(text, encoding="utf-8"))

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
