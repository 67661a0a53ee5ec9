"""Frozen records shared by every arm, the measures and the reports, and the ``Arm`` seam.

A trajectory is the only input the measures read, so everything in it round-trips through JSON.
An ``Arm`` is what the item pipeline runs (``run/pipeline.py``): the policy loop, the stock loop
and every external agent keep it without inheriting from it, and ``arm_registry.py`` names them.
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, TypeAlias

from . import jsonsafe
from .input_files import Skipped, read_jsonl

# A run's turn budget unless a session sets another (``PolicyConfig.max_turns``): also what the
# simulator plans within.
MAX_TURNS = 30

# How a run ends (spec §3.3): the model's own terminal call, or the harness stopping it.
TerminalOutcome: TypeAlias = Literal["ask_user", "stop"]
OutcomeKind: TypeAlias = Literal["ask_user", "stop", "budget_exhausted", "model_error"]


@dataclass(frozen=True)
class Task:
    """What both loops are given: the issue, and which tests show it fixed. Shared by both
    arms, so it lives here rather than in either loop."""

    instance_id: str
    issue_text: str
    test_target: str | None = None  # repro_target, else the FAIL_TO_PASS tests; None: no trigger


@dataclass(frozen=True)
class ToolCall:
    tool: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Rejection:
    """A model-requested call refused by validation (spec §3.2); never executed."""

    tool: str
    reason: str

    def record(self) -> dict[str, Any]:
        return {"ok": False, "rejected": True, "tool": self.tool, "reason": self.reason}


@dataclass(frozen=True)
class Observation:
    """One ledger entry: what a tool (or a trigger) actually returned, as the harness captured it.

    ``kind`` is the tool name for a model-requested call, or ``lint`` / ``test`` / ``symbol`` for an
    event-driven trigger, or ``rejected`` / ``noop`` / ``deferred``. ``result`` is the short form the
    collapsed ledger shows; ``data`` the full captured payload.
    """

    kind: str
    target: str
    result: Any
    data: Any = None
    source: str = "model"  # model | trigger | harness
    trust: str = "trusted"  # trusted | unverified
    caveat: str | None = None
    cites: tuple[str, ...] = ()  # selectors this record is evidence for

    def line(self) -> str:
        """The one-line ledger form the prompt shows: ``kind, target, result``."""
        result = (
            self.result
            if isinstance(self.result, str)
            else jsonsafe.dumps(self.result, ensure_ascii=True)
        )
        flag = f" [unverified: {self.caveat}]" if self.trust == "unverified" else ""
        return f"{self.kind}, {self.target}, {result}{flag}"


@dataclass(frozen=True)
class Outcome:
    """How a run ended: ask_user | stop | budget_exhausted | model_error (the spec's shapes)."""

    outcome: OutcomeKind
    detail: dict[str, Any] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        return {"outcome": self.outcome, **self.detail}


@dataclass(frozen=True)
class Turn:
    index: int
    prompt: list[dict[str, str]] = field(default_factory=list)
    completion: dict[str, Any] | None = None  # Completion.record()
    request: ToolCall | None = None
    rejections: tuple[Rejection, ...] = ()
    observations: tuple[Observation, ...] = ()  # executed call first, then triggers
    deferred: tuple[ToolCall, ...] = ()
    noop: str | None = None  # why the turn was a no-op
    extra_selections: tuple[dict[str, Any], ...] = ()  # the re-selection after a rejection
    # The model-requested calls that ran, in order (not the harness's triggered calls): the
    # calls §9's call precision counts. ``suppressed``: removed by a counterfactual rerun, or
    # withheld by a learned trigger (a candidate's, with a ``withheld`` observation saying why).
    executed: tuple[ToolCall, ...] = ()
    suppressed: tuple[ToolCall, ...] = ()
    # What retrieval presented at each selection (the completion, then a re-selection):
    # {"tools": [...], "fallback": None | "default-4" | "embed" | "default-4 (embedder ...)"}.
    retrieval: tuple[dict[str, Any], ...] = ()

    @property
    def usage_tokens(self) -> int:
        total = 0
        for record in (self.completion, *self.extra_selections):
            if record:
                total += record["usage"]["prompt_tokens"] + record["usage"]["completion_tokens"]
        return total


@dataclass(frozen=True)
class Trajectory:
    instance_id: str
    arm: str
    variant: str
    model: str
    turns: tuple[Turn, ...]
    outcome: Outcome
    patch: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def cost_usd(self) -> float | None:
        costs = [
            r.get("cost_usd") for t in self.turns for r in (t.completion, *t.extra_selections) if r
        ]
        if any(c is None for c in costs):
            return None
        return sum(c for c in costs if c is not None)

    @property
    def tokens(self) -> int:
        return sum(t.usage_tokens for t in self.turns)

    def to_dict(self) -> dict[str, Any]:
        """``dataclasses.asdict(self)``, but a tool argument or result nested 500 deep (which
        asdict's recursion cannot copy) is copied too."""
        return _plain(self)

    @classmethod
    def from_dict(cls, data: Any) -> Trajectory:
        """The trajectory a JSON record holds; ``RecordError`` naming the first field of the
        wrong shape (a ``turns`` that is no list, a turn that is no object, a usage that is not
        numbers), so that every reader refuses such a record in one place
        (``trajectory_json.py``)."""
        from .trajectory_json import trajectory_from

        return trajectory_from(data)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Append as one JSON line (a file holds many trajectories); what cannot be written
        as is (a lone surrogate, nesting too deep) is escaped (see ``jsonsafe``)."""
        line = jsonsafe.dumps(self.to_dict())
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(line + "\n")


class Arm(Protocol):
    """One arm's run of one task: it works in its workspace, leaves its edits there (grading
    takes them from there) and returns its trajectory. Kept by ``policy/loop.py``'s
    ``PolicyLoop``, ``current/loop.py``'s ``CurrentLoop`` and ``agents/loop.py``'s
    ``ExternalLoop``."""

    @property
    def calls_removable(self) -> bool:
        """Whether one of its calls can be removed and the run replayed from its record (the
        counterfactual reruns that score call precision); an external agent runs its own tools,
        so its cannot."""
        ...

    def run(self, task: Task) -> Trajectory: ...


def load_trajectories(path: str | os.PathLike[str]) -> list[Trajectory]:
    """Every trajectory of ``path``; ``InputError`` naming the first line that holds none."""
    trajectories, skipped = read_trajectories(path)
    if skipped:
        raise skipped.error()
    return trajectories


def read_trajectories(path: str | os.PathLike[str]) -> tuple[list[Trajectory], Skipped]:
    """Every trajectory of ``path``, and the lines that hold none (torn, or of the wrong
    shape), skipped."""
    return read_jsonl(Path(path), Trajectory.from_dict)


def _plain(value: Any) -> Any:
    """What ``asdict`` makes of ``value`` (dataclasses to dicts, containers and leaves copied),
    walked on an explicit stack so that no depth of nesting makes it raise."""
    root: list[Any] = [None]
    # (source, parent, slot, copy): copy is None on the way down, the filled copy on the way up.
    todo: list[tuple[Any, Any, Any, Any]] = [(value, root, 0, None)]
    while todo:
        item, parent, slot, filled = todo.pop()
        if filled is not None:  # every child is copied: build the container itself
            if isinstance(item, (list, tuple)):
                parent[slot] = (
                    type(item)(*filled) if hasattr(item, "_fields") else type(item)(filled)
                )
            else:
                parent[slot] = filled
            continue
        if is_dataclass(item) and not isinstance(item, type):
            children: list[tuple[Any, Any]] = [
                (f.name, getattr(item, f.name)) for f in fields(item)
            ]
            target: Any = dict.fromkeys(name for name, _ in children)
        elif isinstance(item, dict):
            children = list(item.items())
            target = dict.fromkeys(item)
        elif isinstance(item, (list, tuple)):
            children = list(enumerate(item))
            target = [None] * len(item)
        else:
            parent[slot] = item if isinstance(item, (str, int, float)) else copy.deepcopy(item)
            continue
        todo.append((item, parent, slot, target))
        todo.extend((child, target, key, None) for key, child in children)
    return root[0]
