"""Simulated logprobs, for runs that ask for them (``--toolpolicy-logprobs N`` with ``sim``).

sim is a simulator, not a language model: it has no confidence to report. What it returns is
seeded noise — each token's logprob a uniform draw in [-3, 0) from ``(seed, item, turn, token)``,
its alternatives below it — marked ``logprobs_simulated`` in the completion's extras, so every
figure computed from it can say so (``rounds/``). A learned trigger fitted on it should find
nothing: that is the check it exists for (the §9 rule must not adopt a trigger fitted on
noise). Pure.
"""

from __future__ import annotations

from typing import Any

from .dice import uniform

SPAN = 3.0


def simulated(seed: int, item: str, turn: int, text: str, top: int) -> list[dict[str, Any]]:
    out = []
    for n, token in enumerate(text.split(" ")[:64]):
        chosen = -SPAN * uniform(seed, item, f"logprob:{turn}:{n}")
        rest = [[f"alt{k}", chosen - 0.5 * k] for k in range(1, top)]
        out.append({"token": token, "logprob": chosen, "top": [[token, chosen], *rest]})
    return out
