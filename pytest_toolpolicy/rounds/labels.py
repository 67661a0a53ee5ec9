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
- ``toolformer``: Toolformer's filter, where a scorer was given (``toolformer.py``): the
  call's result lowered a ``local:`` model's loss on the gold continuation by at least τ_f;
- ``gold``: the gold label's set at this point (hand-written, else derived from the gold
  patch) names a tool: necessary; ``ask_user`` or ``stop``: not.

``necessary`` is the first of these there is, in that order, else empty; ``label_source`` says
which, and each source's own label is a column of its own (``choose`` makes one of them the
label). Train and test splits are by instance (seeded), never by turn, so no instance's points
are on both sides.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ..bench.gold import GOLD_DIR
from ..bench.gold_source import label_for
from ..policy.confidence import confidence
from ..policy.probe import prompt_text
from ..run.counterfactual import executed_calls
from ..run.selection import moves
from ..types import Trajectory, read_trajectories
from .toolformer import Labeler, Scored

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


SOURCES = ("counterfactual", "toolformer", "gold")


def label_rows(
    trajectories: Iterable[Trajectory],
    split: Split,
    gold_dir: Path | None = GOLD_DIR,
    toolformer: Labeler | None = None,
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for trajectory in trajectories:
        rows += _points(trajectory, split, gold_dir, toolformer)
    return rows


def _points(
    trajectory: Trajectory, split: Split, gold_dir: Path | None, toolformer: Labeler | None
) -> list[dict[str, Any]]:
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
            tf = (
                toolformer.label(trajectory.instance_id, turn, trajectory.arm)
                if ran and toolformer
                else None
            )
            necessary, source = _label(cf, None if tf is None else tf.useful, gold_necessary)
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
                "label_toolformer": None if tf is None else tf.useful,
                "label_gold": gold_necessary,
                **_losses(tf),
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


def _label(*labels: bool | None) -> tuple[bool | None, str]:
    """The first label there is, by ``SOURCES``' order, and its source."""
    for label, source in zip(labels, SOURCES, strict=True):
        if label is not None:
            return label, source
    return None, "none"


def _losses(scored: Scored | None) -> dict[str, float | None]:
    """Toolformer's losses (nats per token) and their gain, so τ_f can be set again later."""
    if scored is None:
        return dict.fromkeys(("tf_loss_none", "tf_loss_empty", "tf_loss_with", "tf_gain"))
    return {
        "tf_loss_none": scored.loss_none,
        "tf_loss_empty": scored.loss_empty,
        "tf_loss_with": scored.loss_with,
        "tf_gain": scored.gain,
    }


def choose(frame: pd.DataFrame, source: str) -> pd.DataFrame:
    """``frame`` with one source's own label as ``necessary`` (``any``: as built, the first
    there is); a point that source did not label is left unlabelled."""
    if source == "any":
        return frame
    if source not in SOURCES:
        raise LabelsError(f"no label source {source!r}: any, {', '.join(SOURCES)}")
    out = frame.copy()
    out["necessary"] = out[f"label_{source}"]
    out["label_source"] = out["necessary"].notna().map({True: source, False: "none"})
    return out


def build(
    report: Path,
    split: Split,
    gold_dir: Path | None = GOLD_DIR,
    toolformer: Labeler | None = None,
    note: Callable[[str], None] | None = None,
) -> pd.DataFrame:
    """The labels of every trajectory ``report`` saved, written beside them as ``labels.parquet``.
    A line that holds no trajectory (torn, or of the wrong shape) is skipped, and ``note`` told
    so in one line."""
    path = report / "trajectories.jsonl"
    if not path.is_file():
        raise LabelsError(f"{report}: no trajectories.jsonl (is it a report directory?)")
    trajectories, skipped = read_trajectories(path)
    if skipped and not trajectories:
        raise LabelsError(skipped.summary())  # nothing to go on with
    if skipped and note is not None:
        note(skipped.summary())
    frame = pd.DataFrame(label_rows(trajectories, split, gold_dir, toolformer))
    if frame.empty:
        raise LabelsError(f"{path}: no decision point in any trajectory")
    for column in (
        "gold_correct", "label_counterfactual", "label_toolformer", "label_gold", "necessary"
    ):  # fmt: skip
        frame[column] = frame[column].astype("boolean")
    for column in ("tf_loss_none", "tf_loss_empty", "tf_loss_with", "tf_gain"):
        frame[column] = frame[column].astype("float64")
    frame.to_parquet(report / FILE, index=False)
    return frame


def summary(frame: pd.DataFrame, sources: Sequence[str] = SOURCES) -> str:
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
    scored = frame[frame["tf_gain"].notna()] if "tf_gain" in frame else frame.iloc[:0]
    if len(scored):
        useful = int(scored["label_toolformer"].fillna(False).astype(bool).sum())
        gain = scored["tf_gain"]
        lines.append(
            f"  Toolformer's own label: {len(scored)} calls scored, {useful} useful;"
            f" loss gain (nats/token) median {gain.median():+.3f},"
            f" range {gain.min():+.3f} to {gain.max():+.3f}"
        )
    return "\n".join(lines)
