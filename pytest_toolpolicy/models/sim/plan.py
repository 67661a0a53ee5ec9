"""What the simulator means to do on one instance: the gold edits, maybe preceded by a wrong
first patch that only a failing test output makes it correct."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ...bench.instance import Instance
from .dice import Dice
from .gold import Edit, file_edits

_MARK = "  # sim: tentative fix"
_SEARCH_CAP = 400


@dataclass(frozen=True)
class Plan:
    first: tuple[Edit, ...]  # the first patch, as made
    fix: tuple[Edit, ...] = ()  # made only after a failing test is seen; empty when right

    @property
    def wrong(self) -> bool:
        return bool(self.fix)


@lru_cache(maxsize=256)
def gold_edits(repo: Path, patch: str, entity_scoped: bool) -> tuple[Edit, ...]:
    return tuple(file_edits(repo, patch, entity_scoped=entity_scoped))


def make_plan(instance: Instance, dice: Dice, entity_scoped: bool) -> Plan:
    assert instance.path is not None
    edits = gold_edits(Path(instance.path) / "repo", instance.patch, entity_scoped)
    wrong = _wrong_first(edits)
    if wrong is None or not dice.roll("wrong_patch", "patch"):
        return Plan(edits)
    return wrong


def _wrong_first(edits: tuple[Edit, ...]) -> Plan | None:
    """Part of the gold patch when it has several edits, else a no-op perturbation of the one
    edit's replacement (the original lines with a comment), which the fix then replaces."""
    if len(edits) > 1:
        return Plan(edits[:-1], edits[-1:])
    edit = edits[0]
    lines = edit.search.splitlines(keepends=True)
    for i, line in enumerate(lines):
        code = line.rstrip("\n")
        if (
            code.strip()
            and not any(c in code for c in "#'\"\\")
            and not code.rstrip().endswith(("(", "[", "{", ","))
        ):
            lines[i] = code + _MARK + line[len(code) :]
            perturbed = "".join(lines)
            if len(perturbed) > _SEARCH_CAP:
                return None
            first = Edit(edit.file, edit.selector, edit.search, perturbed)
            return Plan((first,), (Edit(edit.file, edit.selector, perturbed, edit.replace),))
    return None


def blind_search(search: str) -> str:
    """What a blind edit guesses the code says: the right place, the wrong whitespace."""
    if "    " in search:
        return search.replace("    ", "  ", 1)
    return search.rstrip("\n") + " \n"
