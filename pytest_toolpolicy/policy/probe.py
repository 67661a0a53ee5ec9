"""Row 10, a candidate: a linear probe on the model's hidden state before it replies.

The state is the last token's hidden state of the prompt the model is about to answer
(``prompt_text`` of its messages, as the probe was trained on them), from the same ``local:``
model served in llama.cpp's embeddings mode (``hidden.py``). The probe's logit above
``threshold`` says a tool call is necessary at this point; where it says not, a call the model
then requests is withheld, as row 9's trigger withholds one. Where no hidden state can be had
(a model that is not ``local:``, a server that failed), nothing is judged: the call runs.

``toolpolicy probe REPORT --candidates FILE`` fits one on a report's training split and writes
it as JSON beside the report; a candidate names it: ``probe = "reports/rounds/probe.json"``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def prompt_text(messages: Sequence[dict[str, Any]]) -> str:
    """What the probe reads of a prompt: its messages' roles and text, in order."""
    return "\n\n".join(f"{m.get('role', '')}: {m.get('content', '')}" for m in messages)


@dataclass(frozen=True)
class LinearProbe:
    weights: tuple[float, ...]  # over the standardised state
    bias: float
    mean: tuple[float, ...]
    std: tuple[float, ...]
    threshold: float = 0.0  # on the logit: above it, a call is necessary
    source: str = ""  # the file it was read from, for the verdict's words

    def __post_init__(self) -> None:
        if not (len(self.weights) == len(self.mean) == len(self.std)) or not self.weights:
            raise ValueError("a probe's weights, mean and std must be as long as each other")
        if not all(math.isfinite(v) for v in (*self.weights, *self.mean, *self.std, self.bias)):
            raise ValueError("a probe's numbers must be finite")
        if any(s <= 0 for s in self.std):
            raise ValueError("a probe's std must be positive")

    def logit(self, state: Sequence[float]) -> float:
        if len(state) != len(self.weights):
            raise ValueError(f"a state of {len(state)} numbers for a probe of {len(self.weights)}")
        return self.bias + sum(
            w * (x - m) / s
            for w, x, m, s in zip(self.weights, state, self.mean, self.std, strict=True)
        )

    def withhold(self, state: Sequence[float] | None) -> str | None:
        """Why a call is withheld at the state (None: it runs; no state, nothing judged)."""
        if state is None:
            return None
        value = self.logit(state)
        if value > self.threshold:
            return None
        return (
            f"withheld by the necessity probe: logit {value:.3f} is not above"
            f" {self.threshold:.3f} (judged not necessary before the reply)"
        )

    def to_dict(self) -> dict[str, Any]:
        return {"weights": list(self.weights), "bias": self.bias, "mean": list(self.mean),
                "std": list(self.std), "threshold": self.threshold}  # fmt: skip

    @classmethod
    def load(cls, path: Path) -> LinearProbe:
        """A probe from its JSON file; ``ValueError`` saying what is wrong with it."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"{path}: {exc}") from None
        try:
            return cls(
                tuple(float(v) for v in data["weights"]),
                float(data["bias"]),
                tuple(float(v) for v in data["mean"]),
                tuple(float(v) for v in data["std"]),
                float(data.get("threshold", 0.0)),
                source=str(path),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{path}: not a probe ({exc})") from None
