"""Row 9's own label, Toolformer's filter (Schick et al., 2023): a call is useful where its
result lowers the model's loss on the gold continuation by at least ``tau_f``.

At a decision point where a call ran, three contexts are scored on the same continuation:

- ``none``: the prompt the model was shown, as it was (no call);
- ``empty``: the prompt, the model's reply naming the call, and an empty result;
- ``with``: the prompt, the reply, and the call's result as the ledger showed it (the call's own
  observation and the triggers it fired).

Each loss is the mean negative log-likelihood per token of the continuation as the assistant's
reply. The call is useful iff ``min(none, empty) - with >= tau_f`` (the paper's L⁻ − L⁺ ≥ τ_f).
The paper weighs the first five tokens of a sentence of text; a fix's information is spread
over its line, so every token of the continuation counts the same here.

The gold continuation is the instance's fix: the gold patch's first added lines (its removed
ones where it adds none), up to ``CHARS`` characters — what a result that helps the model
should make more likely. Pure but for the scorer, which is passed in (``scorer.py``).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..input_files import RecordError, Skipped, end_torn_line, read_jsonl
from ..types import Turn

CHARS = 96
TAU_F = 1.0  # the paper's threshold for most of its tools (nats per token, weights summing to 1)
CACHE = "toolformer.jsonl"  # beside labels.parquet: a second build scores nothing again


class Scorer(Protocol):
    name: str

    def loss(self, messages: Sequence[dict[str, str]], continuation: str) -> float:
        """The mean negative log-likelihood per token of ``continuation`` as the assistant's
        reply to ``messages``. Raises ``ScoreError`` where it cannot be had."""
        ...


class ScoreError(RuntimeError):
    pass


@dataclass(frozen=True)
class Scored:
    loss_none: float
    loss_empty: float
    loss_with: float
    tau_f: float = TAU_F

    @property
    def gain(self) -> float:
        """How much the result lowered the loss (L⁻ − L⁺, nats per token)."""
        return min(self.loss_none, self.loss_empty) - self.loss_with

    @property
    def useful(self) -> bool:
        return self.gain >= self.tau_f


def continuation_of(patch: str, chars: int = CHARS) -> str | None:
    """The gold continuation: the patch's added lines, stripped and joined, up to ``chars``
    (its removed lines where it adds none). None: the patch changes no line of text."""
    for sign in ("+", "-"):
        lines = [
            line[1:].strip()
            for line in patch.splitlines()
            if line.startswith(sign) and not line.startswith(sign * 3) and line[1:].strip()
        ]
        if lines:
            return "\n".join(lines)[:chars]
    return None


def contexts(turn: Turn) -> dict[str, list[dict[str, str]]] | None:
    """The three contexts of a turn whose call ran (None: no call ran, or no result of it was
    recorded)."""
    if not turn.executed or not turn.completion or not turn.prompt:
        return None
    start = next((i for i, o in enumerate(turn.observations) if o.source == "model"), None)
    if start is None:
        return None
    prompt = [{"role": str(m.get("role")), "content": str(m.get("content"))} for m in turn.prompt]
    ran = [r for r in (turn.completion, *turn.extra_selections) if r][-1]  # the call's reply
    reply = {"role": "assistant", "content": str(ran.get("text") or "")}
    result = "\n".join(o.line() for o in turn.observations[start:])
    return {
        "none": prompt,
        "empty": [*prompt, reply, {"role": "user", "content": ""}],
        "with": [*prompt, reply, {"role": "user", "content": result}],
    }


class Labeler:
    """Scores turns through a scorer, remembering every loss in ``cache`` (a JSON-lines file,
    one line per scored context), so a rebuild asks the model nothing again. A context the
    scorer could not score is counted in ``errors`` with why; its point gets no label."""

    def __init__(
        self,
        scorer: Scorer,
        patches: dict[str, str],
        cache: Path | None = None,
        tau_f: float = TAU_F,
        progress: Callable[[str], None] | None = None,
        arms: frozenset[str] | None = frozenset({"policy"}),
    ) -> None:
        self.scorer, self.patches, self.cache, self.tau_f = scorer, patches, cache, tau_f
        # whose calls are scored (None: every arm's): by default the policy's, the only loop
        # a learned trigger or probe acts in (the stock loop's prompts run several times longer)
        self.arms = arms
        self.progress = progress
        self.errors: list[str] = []
        self.scored = 0
        self.asked = 0  # losses the scorer computed (the rest were remembered)
        # The remembered losses; the lines that hold none (a build killed mid-write tears the
        # last one) are skipped, said by the caller from ``skipped``.
        self.skipped = Skipped(cache or Path(CACHE))
        self._losses: dict[str, float] = {}
        if cache:
            losses, self.skipped = read_jsonl(cache, _loss_entry)
            self._losses = dict(losses)
            end_torn_line(cache)  # a loss appended next starts its own line

    def label(self, instance_id: str, turn: Turn, arm: str = "policy") -> Scored | None:
        if self.arms is not None and arm not in self.arms:
            return None
        gold = continuation_of(self.patches.get(instance_id, ""))
        shown = contexts(turn)
        if gold is None or shown is None:
            return None
        losses: dict[str, float] = {}
        asked = self.asked
        for name, messages in shown.items():
            try:
                losses[name] = self._loss(messages, gold)
            except ScoreError as exc:
                self.errors.append(f"{instance_id} turn {turn.index} ({name}): {exc}")
                return None
        self.scored += 1
        if self.progress and self.asked > asked:
            self.progress(f"{instance_id} turn {turn.index}")
        return Scored(losses["none"], losses["empty"], losses["with"], self.tau_f)

    def _loss(self, messages: list[dict[str, str]], gold: str) -> float:
        key = hashlib.sha256(
            json.dumps([self.scorer.name, messages, gold], sort_keys=True).encode()
        ).hexdigest()
        if key not in self._losses:
            value = self.scorer.loss(messages, gold)
            self.asked += 1
            if not math.isfinite(value):
                raise ScoreError(f"the scorer gave a loss of {value}")
            self._losses[key] = value
            if self.cache:
                with self.cache.open("a", encoding="utf-8") as out:
                    out.write(json.dumps({"key": key, "loss": value}) + "\n")
        return self._losses[key]


def _loss_entry(entry: Any) -> tuple[str, float]:
    """One remembered loss: ``{"key": ..., "loss": ...}``."""
    if not isinstance(entry, dict) or not isinstance(entry.get("key"), str):
        raise RecordError("not a remembered loss (no key)")
    loss = entry.get("loss")
    if not isinstance(loss, (int, float)) or isinstance(loss, bool) or not math.isfinite(loss):
        raise RecordError(f"not a remembered loss (loss {loss!r})")
    return entry["key"], float(loss)
