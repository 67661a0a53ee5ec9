"""What the simulator means to do on one instance: the gold edits, maybe preceded by a wrong
first patch that only a failing test output makes it correct.

The gold edits are computed from the tree the agent starts from (``base_tree.py``), so a real
instance (a checkout at its base commit) and a bundled one are planned alike; they are a pure
function of that tree and the patch, cached by the tree's content key and the patch."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ...bench.instance import Instance
from ...types import MAX_TURNS
from .base_tree import BaseTree, BaseTreeError
from .dice import Dice
from .gold import Edit, GoldError, file_edits

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
def gold_edits(tree: BaseTree, patch: str, entity_scoped: bool) -> tuple[Edit, ...]:
    """Keyed by ``tree.key`` (its reader is not part of the key): one commit, one plan."""
    try:
        edits = tuple(file_edits(tree.read, patch, entity_scoped=entity_scoped))
    except BaseTreeError as exc:
        raise GoldError(str(exc)) from None
    if not edits:
        raise GoldError("the gold patch changes no file the simulator can edit")
    if entity_scoped:
        _fits_the_turns(edits)
    return edits


def _fits_the_turns(edits: tuple[Edit, ...]) -> None:
    """A plan longer than the policy's turn cap is declined up front, by name: run, it would
    end ``budget_exhausted`` and read as the policy's failure when it is the simulator's plan
    (a patch too large for edit_entity's caps, made in many small steps) that is too long."""
    cap = MAX_TURNS
    reads = len({e.selector for e in edits})
    needed = len(edits) + reads + 2  # each selector read once, then the test run and the stop
    if needed > cap:
        raise GoldError(
            f"the gold patch takes {len(edits)} edit_entity calls within the caps and {reads}"
            f" reads, {needed} turns with the test and the stop: more than the policy's {cap}"
        )


def make_plan(instance: Instance, tree: BaseTree | None, dice: Dice, entity_scoped: bool) -> Plan:
    if tree is None:
        raise GoldError(
            "no base tree to plan against: the simulator is told its workspace when a run's"
            " dispatch is made (ab.arms.dispatch_for), and no workspace was attached for it"
        )
    edits = gold_edits(tree, instance.patch, entity_scoped)
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
