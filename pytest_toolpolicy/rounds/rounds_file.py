"""What ``toolpolicy calibrate`` prints, and the candidates file it writes for the next A/B:
the calibrated confidence trigger (row 9), the bandit over its thresholds (row 12) and the hybrid
retriever (row 13), each a candidate the unchanged §9 rule judges against ``current`` beside the
spec's policy."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

from ..policy.probe import LinearProbe
from .calibrate import Calibration, Scores


def _num(value: float, digits: int = 3) -> str:
    return "n/a" if math.isnan(value) else f"{value:.{digits}f}"


def _line(name: str, scores: Scores | None) -> str:
    if scores is None:
        return f"  {name}: no scored point"
    return (
        f"  {name}: {scores.points} calls, {scores.necessary} necessary — errors {scores.errors},"
        f" precision {_num(scores.precision)}, recall {_num(scores.recall)}"
    )


def render_report(calibration: Calibration) -> str:
    trigger = calibration.trigger
    if trigger is None:
        return f"confidence trigger: not fitted ({calibration.why})"
    low, high = calibration.auc_ci
    return "\n".join([
        f"confidence trigger: a call runs when {trigger.feature} is {trigger.necessary_when}"
        f" {trigger.tau:.3f} (fitted on the training split)",
        _line("training split (fitted here)", calibration.train),
        _line("test split, the trigger", calibration.test),
        _line("test split, the deterministic gate", calibration.gate_test),
        f"  AUC on the test split: {_num(calibration.auc)} [95% CI {_num(low)}, {_num(high)}],"
        " bootstrap over instances",
        f"  evidence: {calibration.why}",
        *(["  SIMULATED: these logprobs are sim's seeded noise (sim is a simulator, not a"
            " language model); no figure above says anything of a model's confidence"]
          if calibration.simulated else []),
    ])  # fmt: skip


def write_candidates(
    path: Path, calibration: Calibration, bandit: tuple[str, tuple[float, ...]] | None = None
) -> None:
    """The candidates file; ``bandit`` (a feature and its thresholds, the offline replay's
    arms) adds row 12's live bandit, which picks among them run by run."""
    lines = [
        "# Written by `toolpolicy calibrate`: the later rounds as candidates (§2 rows 9, 12, 13),",
        "# each judged by the §9 rule against current, beside the spec's policy.",
        "",
        "[candidate.hybrid]",
        'description = "row 13: keyword hits first, ties and the rest by MiniLM cosine"',
        'retrieve = "hybrid"',
    ]
    trigger = calibration.trigger
    if trigger is not None:
        lines += [
            "",
            "[candidate.logprob-trigger]",
            f'description = "row 9{" (fitted on SIMULATED logprobs)" if calibration.simulated else ""}:'
            f' {calibration.why}"',
            f'trigger = {{feature = "{trigger.feature}", tau = {trigger.tau!r},'
            f' necessary_when = "{trigger.necessary_when}"}}',
        ]
    if bandit is not None and bandit[1]:
        feature, quantiles = bandit
        taus = tuple(dict.fromkeys(round(t, 3) for t in quantiles))  # a readable arm each
        lines += [
            "",
            "[candidate.bandit]",
            f'description = "row 12: UCB1 picks the tau of {feature} run by run, paid by resolved"',
            f'bandit = {{feature = "{feature}", taus = [{", ".join(repr(t) for t in taus)}],'
            ' necessary_when = "below"}',
        ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def add_probe(report: Path, probe: LinearProbe, candidates: Path | None) -> Path:
    """The probe as ``REPORT/probe.json``, and, with ``candidates``, a ``[candidate.probe]``
    naming it added to that file (any earlier one replaced)."""
    path = report / "probe.json"
    path.write_text(json.dumps(probe.to_dict()), encoding="utf-8")
    if candidates is not None:
        text = candidates.read_text(encoding="utf-8") if candidates.exists() else ""
        kept = text.split("\n[candidate.probe]\n")[0].rstrip("\n")
        entry = (
            "\n\n[candidate.probe]\n"
            'description = "row 10: a linear probe on the hidden state before the reply"\n'
            f"probe = {json.dumps(os.path.relpath(path, candidates.parent))}\n"
        )
        candidates.write_text(kept + entry, encoding="utf-8")
    return path
