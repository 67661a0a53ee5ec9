"""Gold labels derived from an instance's problem statement and gold patch, for instances no one
labelled by hand (real SWE-bench rows). The rules follow the conventions of the hand-written
bundled labels and are stated, with how well they agree with those labels, in
``gold_labels/FORMAT.md``.

Pure: text in, label out. The code at the base commit is not read (the row that is scored is
rebuilt from a saved trajectory, where no checkout exists), so the entities edited are those
the diff itself shows (``patch_entities``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .gold import GoldLabel
from .issue_pointers import pointers
from .patch_entities import Edited, PatchEntities, patch_entities

LOCATE_BY_NAME = frozenset({"search_symbol", "read_entity"})
LOCATE_BY_TRACEBACK = frozenset({"read_entity", "search_symbol", "search_code"})
LOCATE_BY_BARE_NAME = frozenset({"search_symbol", "search_code"})
LOCATE_BY_BEHAVIOUR = frozenset({"search_code"})
ASK = frozenset({"ask_user"})


@dataclass(frozen=True)
class Derivation:
    """The label, or why none could be derived (``label`` None, ``reason`` says why)."""

    label: GoldLabel | None
    reason: str  # the rules that gave the label, or why there is none

    def record(self) -> dict[str, Any]:
        """What a run keeps in its trajectory's meta (``gold_source.DERIVED_KEY``), so a row
        rebuilt from the saved trajectory is scored on the same label."""
        return {"problem": self.reason} if self.label is None else self.label.to_dict()


def derive(
    instance_id: str, problem_statement: str, patch: str, underspecified: bool = False
) -> Derivation:
    if underspecified:
        # The hand-written under-specified labels ask first: no reading settles what the
        # reporter has left open.
        why = "derived: under-specified, so ask_user at every point"
        return Derivation(GoldLabel(instance_id, (ASK, ASK, ASK), "ask_user", why), why)
    edits = patch_entities(patch)
    if not edits.edited:
        return Derivation(None, "the gold patch changes no Python source file (tests excluded)")
    issue = pointers(problem_statement)
    named = [t for t in issue.dotted if _is_code(t, edits)]
    named_edit = [t for t in named if any(_names(t, e) for e in edits.edited)]
    frames = [f for f in issue.frames if _in_repository(f.path, edits)]
    frame_edit = [f.function for f in frames if _frame_edits(f.path, f.line, f.function, edits)]
    bare = sorted(w for w in issue.words if any(w in e.scope for e in edits.edited))
    single = len({_key(e) for e in edits.edited}) == 1
    if named:
        entry, why = LOCATE_BY_NAME, f"names {named[0]}"
    elif frames:
        entry, why = LOCATE_BY_TRACEBACK, f"traceback through {frames[-1].function}"
    elif bare:
        entry, why = LOCATE_BY_BARE_NAME, f"names the edited {bare[0]} without its path"
    else:
        entry, why = LOCATE_BY_BEHAVIOUR, "behaviour only"
    # The issue leads straight to the one entity the fix changes: read it, then edit it.
    pointed = single and bool(named_edit or frame_edit)
    if pointed:
        second = frozenset({"read_entity", "edit_entity"})
        third = frozenset({"edit_entity", "run_test"})
    else:
        second = frozenset({"read_entity"})
        third = frozenset({"read_entity", "edit_entity"})
        if named and not named_edit:
            third |= {"search_symbol"}  # the fix is away from the entity the issue names
    edited = ", ".join(e.name for e in edits.edited[:4]) + (
        ", ..." if len(edits.edited) > 4 else ""
    )
    reach = "the one entity edited" if pointed else f"edits {edited}"
    why = f"derived: {why}; {reach}"
    return Derivation(GoldLabel(instance_id, (entry, second, third), "stop", why), why)


def _key(e: Edited) -> tuple[object, ...]:
    return (e.module, e.scope, e.exact, e.hunk)


def _is_code(token: str, edits: PatchEntities) -> bool:
    """A dotted name that is the repository's code: it starts at one of the edited files'
    packages or at a class the diff shows (``MemStore.restore``), not at a local variable
    (``store.remember``) or another library (``datetime.datetime``)."""
    first = token.split(".")[0]
    return first in edits.packages or first in edits.classes


def _names(token: str, e: Edited) -> bool:
    """Whether a dotted name names the edited entity: its last part is the entity's name and
    the part before it one of the entity's module or enclosing names; for a change in an
    unnamed member of a class, a member of that class."""
    parts = token.split(".")
    if not e.exact:
        return len(parts) >= 2 and bool(e.scope) and parts[-2] == e.scope[-1]
    if not e.scope:
        return token == e.module or token.endswith("." + e.module)
    context = (*e.module.split("."), *e.scope[:-1])
    return parts[-1] == e.scope[-1] and (len(parts) == 1 or parts[-2] in context)


def _file_of(path: str, module: str) -> bool:
    tail = "/" + module.replace(".", "/")
    return ("/" + path).endswith((f"{tail}.py", f"{tail}/__init__.py"))


def _in_repository(path: str, edits: PatchEntities) -> bool:
    return any(f"/{p}/" in f"/{path}" for p in edits.packages)


def _frame_edits(path: str, line: int, function: str, edits: PatchEntities) -> bool:
    """A frame inside an edited hunk, in the function holding the change (or, when the diff
    shows only the class, in a member of it)."""
    for index, hunk in enumerate(edits.hunks):
        if not (_file_of(path, hunk.module) and hunk.start <= line < hunk.start + hunk.length):
            continue
        for e in edits.edited:
            if e.module == hunk.module and (
                (not e.exact and e.hunk == index) or (e.exact and e.scope[-1:] == (function,))
            ):
                return True
    return False
