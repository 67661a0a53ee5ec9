"""The later rounds from the shell (``rounds/``): ``toolpolicy labels REPORT`` (necessity labels
of a report's trajectories, ``labels.parquet``; ``--toolformer`` adds Toolformer's, scored by a
``local:`` model), ``toolpolicy calibrate REPORT`` (row 9's τ fitted on the training split,
scored on the test split, written as a candidates file with row 12's bandit) and ``toolpolicy
probe REPORT`` (row 10's probe on the hidden states of the prompts, likewise). Row 13's
``toolpolicy retrieval`` is ``retrieval.py``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .errors import UsageError
from .options import positive_int

# What every command that builds the labels takes: the split, and Toolformer's scoring.
_LABEL_OPTIONS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("--seed", {"type": int, "default": 0, "help": "the split's seed (default 0)"}),
    ("--test-share", {"type": float, "default": 0.4,
                      "help": "the share of instances in the test split (default 0.4)"}),
    ("--toolformer", {"action": "store_true",
                      "help": "also Toolformer's label of each call that ran: did its result lower"
                      " the scorer's loss on the gold fix by tau_f (scores remembered in"
                      " toolformer.jsonl)"}),
    ("--scorer", {"default": "local:gemma3-270m",
                  "help": "the local: model that scores (default local:gemma3-270m)"}),
    ("--dataset", {"default": "bundled",
                   "help": "where the instances' gold patches come from (default bundled)"}),
    ("--toolformer-arms", {"default": "policy",
                           "help": "whose calls are scored: comma-separated arms, or all (default"
                           " policy, the loop a learned trigger or probe acts in)"}),
    ("--tau-f", {"type": float, "default": 1.0,
                 "help": "Toolformer's threshold, nats per token (default 1.0, the paper's)"}),
)  # fmt: skip


def add_parser(sub: Any) -> None:
    for name, what, func in (
        ("labels", "necessity labels of a report's decision points, as labels.parquet", _labels),
        ("calibrate", "fit row 9's confidence trigger on the labels' training split", _calibrate),
        (
            "probe",
            "fit row 10's hidden-state probe on the training split, score it on the test",
            _probe,
        ),
    ):
        cmd = sub.add_parser(name, help=what)
        cmd.add_argument("report", type=Path, help="the report directory an A/B session wrote")
        for flag, options in _LABEL_OPTIONS:
            cmd.add_argument(flag, **options)
        if name != "labels":
            cmd.add_argument(
                "--label", default="any", choices=("any", "counterfactual", "toolformer", "gold"),
                help="which source's label to fit on (default any: the first there is)",
            )  # fmt: skip
        if name == "probe":
            cmd.add_argument(
                "--model", default="local:gemma3-270m",
                help="the local: model whose hidden states are probed (default local:gemma3-270m)",
            )  # fmt: skip
            cmd.add_argument(
                "--candidates", type=Path,
                help="a candidates file to add the fitted probe to, as [candidate.probe]",
            )  # fmt: skip
            cmd.add_argument(
                "--local-threads", type=positive_int, default=1, metavar="N",
                help="threads of the model's server (default 1; more only on an idle machine)",
            )  # fmt: skip
        if name == "calibrate":
            cmd.add_argument(
                "--out", type=Path,
                help="the candidates file to write (default REPORT/rounds.toml)",
            )  # fmt: skip
        cmd.set_defaults(func=func)


def _split(ns: argparse.Namespace) -> Any:
    from ..rounds.labels import Split

    if not 0 < ns.test_share < 1:
        raise SystemExit(f"toolpolicy: --test-share must be between 0 and 1, got {ns.test_share}")
    return Split(ns.seed, ns.test_share)


def _built(ns: argparse.Namespace, command: str) -> Any:
    """The report's labels, built and written, with the chosen source's label as the one to
    fit on; a report with none is a ``UsageError``."""
    from ..rounds.labels import LabelsError, build, choose
    from .inputs import say, say_skipped

    labeler = _toolformer(ns, command)
    if labeler is not None:
        say_skipped(command, labeler.skipped)
    try:
        frame = build(ns.report, _split(ns), toolformer=labeler, note=lambda s: say(command, s))
    except LabelsError as exc:
        raise UsageError(str(exc), command) from None
    if labeler is not None:
        for error in labeler.errors:
            print(f"note: no Toolformer label: {error}", file=sys.stderr)
        print(f"Toolformer: {labeler.scored} calls scored by {labeler.scorer.name}"
              f" ({len(labeler.errors)} could not be)", file=sys.stderr)  # fmt: skip
    return choose(frame, getattr(ns, "label", "any"))


def _toolformer(ns: argparse.Namespace, command: str) -> Any:
    if not ns.toolformer:
        return None
    from ..rounds.retrieval import rows_of
    from ..rounds.scorer import LocalScorer
    from ..rounds.toolformer import CACHE, Labeler, ScoreError
    from .inputs import say

    try:
        scorer = LocalScorer(ns.scorer)
    except ScoreError as exc:
        raise SystemExit(f"toolpolicy {command}: {exc}") from None
    rows, malformed = rows_of(ns.dataset)  # a dataset that cannot be read: InputError, exit 2
    say(command, malformed)
    patches = {str(r["instance_id"]): str(r.get("patch") or "") for r in rows}

    def progress(what: str) -> None:
        print(f"  scored {what}", file=sys.stderr, flush=True)

    arms = None if ns.toolformer_arms == "all" else frozenset(ns.toolformer_arms.split(","))
    return Labeler(scorer, patches, ns.report / CACHE, ns.tau_f, progress, arms)


def _labels(ns: argparse.Namespace) -> int:
    from ..rounds.labels import FILE, summary

    frame = _built(ns, "labels")
    print(summary(frame))
    print(f"written: {ns.report / FILE}")
    return 0


def _calibrate(ns: argparse.Namespace) -> int:
    from ..rounds.bandit import render, replay
    from ..rounds.calibrate import fit
    from ..rounds.labels import summary
    from ..rounds.rounds_file import render_report, write_candidates

    frame = _built(ns, "calibrate")
    print(summary(frame))
    calibration = fit(frame, ns.seed)
    print(render_report(calibration))
    feature = calibration.trigger.feature if calibration.trigger else "lp_mean"
    replayed = replay(frame, feature, ns.seed)
    print(render(replayed))
    out = ns.out or ns.report / "rounds.toml"
    taus = tuple(t for t in replayed.taus if t is not None) if replayed else ()
    write_candidates(out, calibration, (feature, taus))
    print(f"candidates: {out}")
    return 0


def _probe(ns: argparse.Namespace) -> int:
    import numpy as np

    from ..policy.hidden import text_states_for
    from ..rounds.probe import render, score

    if not str(ns.model).startswith("local:"):
        print(render(None, f"{ns.model} exposes no hidden states; only local: models do"))
        return 0
    if ns.candidates is not None and ns.candidates.exists():
        from ..input_files import read_toml

        read_toml(ns.candidates)  # the file the probe is added to, before any fitting
    frame = _built(ns, "probe")
    # its server starts with the first state asked for
    state = text_states_for(ns.model, ns.local_threads)

    def embed(texts: list[str]) -> Any:
        states = [state(text) for text in texts]  # one at a time: each fills the batch
        if any(s is None for s in states):
            raise SystemExit(f"toolpolicy probe: no hidden states from {ns.model} (see above)")
        return np.asarray(states, dtype=float)

    result = score(frame, embed, seed=ns.seed)
    print(render(result))
    if result.probe is not None:
        from ..rounds.rounds_file import add_probe

        written = add_probe(ns.report, result.probe, ns.candidates)
        print(
            f"probe: {written}" + (f", candidate added to {ns.candidates}" if ns.candidates else "")
        )
    return 0
