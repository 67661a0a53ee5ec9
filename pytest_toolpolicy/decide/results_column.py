"""One column of ``results.parquet`` declared: its name, its meaning, and how it is read off one
run (a :class:`Source`, which ``run/row.py`` builds from the run's trajectory once)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..types import Trajectory
from .variants import ItemSpec

if TYPE_CHECKING:  # bench's package imports the harness; a type is all this needs of it
    from ..bench.gold_source import Labelled


@dataclass(frozen=True)
class Column:
    name: str
    doc: str  # its type and meaning, as the notebook's reader needs them
    read: Callable[[Source], Any]


@dataclass(frozen=True)
class Source:
    """What a row is read from (``schema.SPECS`` say how): one run's trajectory, its item, and
    what is derived from them once."""

    trajectory: Trajectory
    spec: ItemSpec
    meta: dict[str, Any]
    usage: list[dict[str, Any]]  # every reply's usage, re-selections included
    cf: dict[str, Any]  # the counterfactual reruns' counts ({} when none were made)
    grade: dict[str, Any]  # {} when not graded
    status: str
    error: str | None
    cost_usd: float | None  # the spend the row measures (``run/row.py``'s ``_spent``)
    replies: int
    replies_parsed: int
    calls: int
    selection_correct: int
    selection_attempted: int
    gold: Labelled  # the label selection was scored on, and where it came from
    abstained: bool
    duration_s: float
    acts: dict[str, int]  # each gate's acts (run/gate_acts.py); {} for the baseline
    blocked: dict[str, int]  # a gate's chances to act that it could not take
