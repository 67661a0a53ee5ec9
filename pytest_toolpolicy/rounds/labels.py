"""Necessity labels as data: one row per decision point of every saved trajectory.

A decision point is one model selection (a turn's reply, then its re-selection after a
rejection), as selection accuracy counts them. Its features are what was known before the reply
— the turn index, the kind of the last observation, the tools retrieval presented, how many
edits and test runs came before — and what the reply itself says of the model's confidence
(``confidence.py``: the mean and minimum logprob of its first tokens, the entropy over their
top alternatives), which a learned trigger reads before any call runs. Its move is the tool the
reply named (or ``ask_user``, ``stop``, ``none``).

The label "a tool call here was necessary", from what the run can show:

- ``counterfactual``: the reply's call ran in a resolved run and was removed in its own rerun
  (§9 measure 4): necessary iff the rerun ended unresolved. A call of an unresolved run says
  nothing (no removal can flip it) and gets no label from here;
- ``gold``: the gold label's set at this point (hand-written, else derived from the gold
  patch) names a tool: necessary; ``ask_user`` or ``stop``: not.

``necessary`` is the counterfactual label where there is one, else the gold one, else empty;
``label_source`` says which. Train and test splits are by instance (seeded), never by turn, so
no instance's points are on both sides. Toolformer's own label (a call is useful where its
observation lowers the loss on the gold continuation) needs an endpoint that scores a given
text; llama.cpp's server does not return prompt logprobs, so it is not built.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..ab.counterfactual import executed_calls
from ..ab.selection import moves
from ..bench.gold import GOLD_DIR
from ..bench.gold_source import label_for
from ..policy.confidence import confidence
from ..policy.probe import prompt_text
from ..types import Trajectory, load_trajectories

FILE = "labels.parquet"
TEST_SHARE = 0.4
TERMINAL = ("ask_user", "stop")


class LabelsError(ValueError):
    pass


@dataclass(frozen=True)
class Split:
    seed: int = 0
    test_share: float = TEST_SHARE

    def of(self, instance_id: str) -> str:
        """``train`` or ``test``: a seeded hash of the instance, so adding instances never
        moves another instance across the split."""
        digest = hashlib.sha256(f"{self.seed}:{instance_id}".encode()).digest()
        return "test" if int.from_bytes(digest[:8], "big") / 2**64 < self.test_share else "train"


def label_rows(
    trajectories: Iterable[Trajectory], split: Split, gold_dir: Path | None = GOLD_DIR
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for trajectory in trajectories:
        rows += _points(trajectory, split, gold_dir)
    return rows


def _points(trajectory: Trajectory, split: Split, gold_dir: Path | None) -> list[dict[str, Any]]:
    gold = label_for(trajectory.instance_id, gold_dir, trajectory.meta).label
    verdicts = _counterfactual(trajectory)
    resolved = bool((trajectory.meta.get("grade") or {}).get("resolved"))
    rows: list[dict[str, Any]] = []
    named = moves(trajectory)  # the move set of each decision point, as selection scores it
    last_kind, edits, tests, ordinal = "none", 0, 0, 0
    for turn in trajectory.turns:
        shown = list(turn.retrieval)
        records = [turn.completion, *turn.extra_selections]
        for selection, record in enumerate(records):
            if not record or record.get("error"):
                continue
            point = len(rows)
            move = sorted(named[point])[0] if point < len(named) and named[point] else "none"
            ran = bool(turn.executed) and selection == len(records) - 1
            cf = verdicts.get(ordinal) if ran else None
            gold_set = gold.decisions[point] if gold and point < len(gold.decisions) else None
            gold_necessary = None if gold_set is None else not gold_set <= set(TERMINAL)
            necessary, source = _label(cf, gold_necessary)
            rows.append({
                "instance_id": trajectory.instance_id,
                "split": split.of(trajectory.instance_id),
                "arm": trajectory.arm,
                "variant": trajectory.variant,
                "model": trajectory.model,
                "trial": int(trajectory.meta.get("trial") or 1),
                "point": point,
                "turn": turn.index,
                "reselection": selection > 0,
                "last_kind": last_kind,
                "edits_before": edits,
                "tests_before": tests,
                "retrieved": ",".join((shown[selection] if selection < len(shown) else {})
                                      .get("tools", [])),  # fmt: skip
                "move": move,
                "executed": ran,
                "resolved": resolved,
                "gold_moves": ",".join(sorted(gold_set)) if gold_set else "",
                "gold_correct": None if gold_set is None else move in gold_set,
                "label_counterfactual": cf,
                "label_gold": gold_necessary,
                "necessary": necessary,
                "label_source": source,
                # what the model was shown (the probe embeds it); a re-selection's own prompt
                # is not recorded, so it has none
                "prompt": "" if selection else prompt_text(turn.prompt),
                "logprobs_source": _logprobs_source(record),
                **confidence(record),
            })  # fmt: skip
        ordinal += len(turn.executed)
        for observation in turn.observations:
            last_kind = observation.kind
            edits += observation.kind in ("edit_entity", "edit_file", "write_file")
            tests += observation.kind in ("run_test", "test")
    return rows


def _logprobs_source(record: dict[str, Any]) -> str:
    """``endpoint`` (a model's own), ``simulated`` (sim's seeded noise) or ``none``."""
    extra = record.get("extra") or {}
    if not extra.get("logprobs"):
        return "none"
    return "simulated" if extra.get("logprobs_simulated") else "endpoint"


def _counterfactual(trajectory: Trajectory) -> dict[int, bool]:
    """Each executed call's verdict by its ordinal, where its rerun ran."""
    record = trajectory.meta.get("counterfactual") or {}
    out = {}
    for entry in record.get("per_call") or []:
        if isinstance(entry, dict) and isinstance(entry.get("ordinal"), int):
            out[entry["ordinal"]] = bool(entry.get("necessary"))
    return out if len(out) <= len(executed_calls(trajectory)) else {}


def _label(cf: bool | None, gold: bool | None) -> tuple[bool | None, str]:
    if cf is not None:
        return cf, "counterfactual"
    if gold is not None:
        return gold, "gold"
    return None, "none"


def build(report: Path, split: Split, gold_dir: Path | None = GOLD_DIR) -> pd.DataFrame:
    """The labels of every trajectory ``report`` saved, written beside them as ``labels.parquet``."""
    path = report / "trajectories.jsonl"
    if not path.is_file():
        raise LabelsError(f"{report}: no trajectories.jsonl (is it a report directory?)")
    frame = pd.DataFrame(label_rows(load_trajectories(path), split, gold_dir))
    if frame.empty:
        raise LabelsError(f"{path}: no decision point in any trajectory")
    for column in ("gold_correct", "label_counterfactual", "label_gold", "necessary"):
        frame[column] = frame[column].astype("boolean")
    frame.to_parquet(report / FILE, index=False)
    return frame


def summary(frame: pd.DataFrame, sources: Sequence[str] = ("counterfactual", "gold")) -> str:
    lines = [f"{len(frame)} decision points of {frame['instance_id'].nunique()} instances"]
    for split in ("train", "test"):
        part = frame[frame["split"] == split]
        parts = []
        for source in sources:
            of = part[part["label_source"] == source]
            yes = int(of["necessary"].fillna(False).astype(bool).sum())
            parts.append(f"{source} {yes} necessary / {len(of) - yes} not")
        unlabelled = int((part["label_source"] == "none").sum())
        lines.append(
            f"  {split}: {part['instance_id'].nunique()} instances, {len(part)} points — "
            + ", ".join(parts)
            + f", {unlabelled} unlabelled"
        )
    return "\n".join(lines)
