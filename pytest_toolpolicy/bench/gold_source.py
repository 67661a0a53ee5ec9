"""Which gold label a run is scored on, and where it came from.

A hand-written label (``gold.json`` beside a bundled instance) always wins. Otherwise the label
derived from the instance's gold patch (``gold_derive``), which a run records in its trajectory's
meta under ``DERIVED_KEY`` (the patch is not in the trajectory, the label is), so a row rebuilt
from a saved trajectory is scored on the same label. An under-specified instance needs no patch:
its derived label follows from the flag the trajectory carries. Anything else has no label and
is left out of selection accuracy — never scored as wrong.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .gold import GoldError, GoldLabel, hand_label, label_from
from .gold_derive import derive

HAND, DERIVED, NONE = "hand", "derived", "none"
SOURCES = (HAND, DERIVED, NONE)
DERIVED_KEY = "gold_derived"  # the trajectory meta key of the derived label (or its problem)


@dataclass(frozen=True)
class Labelled:
    label: GoldLabel | None
    source: str  # hand | derived | none
    detail: str | None  # derived: the rules that gave it; none: why there is no label


def label_for(instance_id: str, gold_dir: Path | None, meta: Mapping[str, Any]) -> Labelled:
    """The label ``instance_id``'s run is scored on; ``meta`` is its trajectory's meta."""
    try:
        hand = hand_label(instance_id, gold_dir)
    except GoldError as exc:
        # A broken hand-written label is not silently replaced by a derived one: the row
        # says what is wrong with it, and the instance is left unlabelled until it is fixed.
        return Labelled(None, NONE, f"hand-written label unusable: {exc}")
    if hand is not None:
        return Labelled(hand, HAND, None)
    recorded = meta.get(DERIVED_KEY)
    if isinstance(recorded, Mapping) and "problem" in recorded:
        return Labelled(None, NONE, f"no label could be derived: {recorded['problem']}")
    if recorded is not None:
        try:
            label = label_from(recorded, instance_id, f"trajectory meta {DERIVED_KEY}")
        except GoldError as exc:
            return Labelled(None, NONE, str(exc))
        return Labelled(label, DERIVED, label.notes or None)
    if meta.get("underspecified"):
        derived = derive(instance_id, "", "", underspecified=True)
        return Labelled(derived.label, DERIVED, derived.reason)
    return Labelled(
        None, NONE, "no hand-written label, and the run recorded no label derived from its patch"
    )


def record(
    instance_id: str, problem_statement: str, patch: str, underspecified: bool
) -> dict[str, Any]:
    """The meta entry (under ``DERIVED_KEY``) a run records for its instance."""
    return derive(instance_id, problem_statement, patch, underspecified).record()
