"""The model's own confidence in a reply, from the logprobs the endpoint returned with it.

Row 9's trigger (``ConfidenceTrigger``) reads these before any call of the reply runs: over the reply's first
``HEAD`` tokens, the mean and the minimum logprob of the tokens chosen, and the mean entropy of
the top alternatives (renormalised over those the endpoint gave). A reply recorded without
logprobs has none (NaN): a trigger that needs them says it could not decide, never guesses.
Pure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

HEAD = 8  # the tokens that open a reply: where a structured reply names its tool
FEATURES = ("lp_mean", "lp_min", "entropy")


def confidence(record: Mapping[str, Any]) -> dict[str, float]:
    """The features of one completion record (``Completion.record()``)."""
    tokens = _tokens((record.get("extra") or {}).get("logprobs"), HEAD)
    if not tokens:
        return dict.fromkeys(FEATURES, math.nan)
    chosen = [lp for lp, _ in tokens]
    return {
        "lp_mean": sum(chosen) / len(chosen),
        "lp_min": min(chosen),
        "entropy": sum(_entropy(top) for _, top in tokens) / len(tokens),
    }


def _tokens(raw: object, head: int) -> list[tuple[float, list[float]]]:
    """(the chosen token's logprob, its alternatives' logprobs) for the first ``head``
    well-formed tokens (the rest of a long reply is never read)."""
    out: list[tuple[float, list[float]]] = []
    if not isinstance(raw, list):
        return out
    for entry in raw:
        if len(out) == head:
            break
        if not isinstance(entry, Mapping) or not _number(entry.get("logprob")):
            continue
        top = [pair[1] for pair in entry.get("top") or []
               if isinstance(pair, Sequence) and len(pair) == 2 and _number(pair[1])]  # fmt: skip
        out.append((float(entry["logprob"]), [float(v) for v in top]))
    return out


def _entropy(logprobs: list[float]) -> float:
    if not logprobs:
        return math.nan
    weights = [math.exp(v) for v in logprobs]
    total = sum(weights)
    return -sum(w / total * math.log(w / total) for w in weights if w > 0)


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True)
class ConfidenceTrigger:
    """Row 9, a candidate: whether a model-requested call is necessary, from the reply's own
    confidence. ``feature`` (one of ``FEATURES``) against ``tau``: the call is necessary when the
    feature is ``necessary_when`` (``below`` or ``above``) the threshold, else it is withheld as
    spurious. A reply without logprobs is never judged: its call runs, as the spec's gate runs it.
    ``tau`` is calibrated on a training split (``toolpolicy calibrate``), never on the items it
    is judged on."""

    feature: str
    tau: float
    necessary_when: str = "below"

    def __post_init__(self) -> None:
        if self.feature not in FEATURES:
            raise ValueError(f"feature must be one of {', '.join(FEATURES)}, got {self.feature!r}")
        if self.necessary_when not in ("below", "above"):
            raise ValueError(f"necessary_when must be below or above, got {self.necessary_when!r}")
        if not math.isfinite(self.tau):
            raise ValueError(f"tau must be a finite number, got {self.tau!r}")

    def necessary(self, value: float) -> bool | None:
        """Whether a call with this feature value is necessary (None: no value to judge)."""
        if math.isnan(value):
            return None
        return value <= self.tau if self.necessary_when == "below" else value >= self.tau

    def withhold(self, record: Mapping[str, Any]) -> str | None:
        """Why the call of this completion record is withheld, or None (it runs)."""
        value = confidence(record)[self.feature]
        if self.necessary(value) is not False:
            return None
        side = "above" if self.necessary_when == "below" else "below"
        return (
            f"withheld by the confidence trigger: {self.feature} {value:.3f} is {side} tau"
            f" {self.tau:.3f} (judged not necessary)"
        )
