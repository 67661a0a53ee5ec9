"""Gold labels (``bench/bundled/instances/<instance_id>/gold.json``, beside each bundled instance) and
the map that scores both arms on them.

Format and mapping are documented in ``gold_labels/FORMAT.md``. Instances without a hand-written
label get one derived from their gold patch (``gold_derive.py``); ``gold_source.py`` says which
label a run is scored on.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GOLD_DIR = Path(__file__).resolve().parent / "bundled" / "instances"  # package data
MOVES = frozenset(
    {"read_entity", "search_symbol", "search_code", "edit_entity", "run_test", "execute"}
    | {"ask_user", "stop"}
)
_SEARCH = {"grep", "rg", "ag", "ack", "find", "ls", "tree"}
_READ = {"cat", "head", "tail", "less", "nl", "more"}
_PYTEST = re.compile(r"(^|[\s;&|(])(py\.test|pytest|python3?(\.\d+)? -m pytest)(\s|$)")


class GoldError(ValueError):
    """A gold label file that cannot be used; the message names the file and the problem."""


@dataclass(frozen=True)
class GoldLabel:
    instance_id: str
    decisions: tuple[frozenset[str], ...]  # acceptable moves at decision points 1..3
    outcome: str  # stop | ask_user
    notes: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The ``gold.json`` shape (moves sorted, so equal labels write equal text)."""
        return {
            "instance_id": self.instance_id,
            "decisions": [sorted(d) for d in self.decisions],
            "outcome": self.outcome,
            "notes": self.notes,
        }


def load_gold(instance_id: str, directory: Path = GOLD_DIR) -> GoldLabel:
    """The label in ``directory/<instance_id>/gold.json``."""
    path = directory / instance_id / "gold.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise GoldError(f"{path}: {exc}") from None
    return label_from(data, instance_id, str(path))


def hand_label(instance_id: str, directory: Path | None) -> GoldLabel | None:
    """The hand-written label, or None when there is none (a broken one is a ``GoldError``)."""
    if directory is None or not (directory / instance_id / "gold.json").exists():
        return None
    return load_gold(instance_id, directory)


def label_from(data: object, instance_id: str, where: str) -> GoldLabel:
    """A label from its ``gold.json`` shape; ``where`` names it in the error."""
    if not isinstance(data, dict):
        raise GoldError(f"{where}: a label is a JSON object, got {type(data).__name__}")
    decisions = data.get("decisions")
    if data.get("instance_id") != instance_id:
        raise GoldError(f"{where}: instance_id is {data.get('instance_id')!r}")
    if (
        not isinstance(decisions, list)
        or not decisions
        or not all(isinstance(d, list) and d and set(d) <= MOVES for d in decisions)
    ):
        raise GoldError(f"{where}: decisions must be non-empty lists of {sorted(MOVES)}")
    if data.get("outcome") not in ("stop", "ask_user"):
        raise GoldError(f"{where}: outcome must be stop or ask_user, got {data.get('outcome')!r}")
    return GoldLabel(
        instance_id,
        tuple(frozenset(d) for d in decisions[:3]),
        data["outcome"],
        str(data.get("notes", "")),
    )


def baseline_moves(tool: str, args: dict[str, Any], *, changed: bool = True) -> frozenset[str]:
    """The policy move(s) a baseline call does the work of (``gold_labels/FORMAT.md``).

    The baseline has no question tool: its ``submit`` with no change to the code (``changed``
    false) is how it abstains, so it counts as ``ask_user``; otherwise ``submit`` is ``stop``.
    """
    if tool == "submit":
        return frozenset({"stop"} if changed else {"ask_user"})
    if tool == "read_file":
        return frozenset({"read_entity"})
    if tool in ("edit_file", "write_file"):
        return frozenset({"edit_entity"})
    if tool in ("ask_user", "stop"):
        return frozenset({tool})
    if tool != "bash":
        return frozenset({tool})
    command = str(args.get("command", "")).strip()
    if _PYTEST.search(command):
        return frozenset({"run_test"})
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    first = words[0] if words else ""
    if first in _SEARCH or words[:2] == ["git", "grep"]:
        return frozenset({"search_symbol", "search_code"})
    if first in _READ or (first == "sed" and "-n" in words):
        return frozenset({"read_entity"})
    return frozenset({"execute"})


def selection_correct(moves: frozenset[str], acceptable: frozenset[str]) -> bool:
    """A selection is correct when any move it counts as is acceptable at that point."""
    return bool(moves & acceptable)
