"""The later rounds from the shell: ``toolpolicy retrieval`` (row 13 measured: each retriever's
NDCG@5 and recall@5 against the gold labels), ``toolpolicy labels REPORT`` (necessity labels of
a report's trajectories, ``labels.parquet``; ``--toolformer`` adds Toolformer's, scored by a
``local:`` model), ``toolpolicy calibrate REPORT`` (row 9's τ fitted on the training split,
scored on the test split, written as a candidates file with row 12's bandit) and ``toolpolicy
probe REPORT`` (row 10's probe on the hidden states of the prompts, likewise)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

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
    ret = sub.add_parser(
        "retrieval",
        help="NDCG@5 and recall@5 of the keyword map, the embedding retriever and a hybrid",
    )
    ret.add_argument(
        "--dataset",
        action="append",
        help="a dataset as --toolpolicy-dataset names one, or a JSON-lines file of SWE-bench"
        " rows (instance_id, problem_statement, patch); repeatable (default: bundled)",
    )
    ret.add_argument(
        "--report",
        type=Path,
        action="append",
        help="also decision points 1 and 2 of this report's policy runs, where they were on the"
        " gold path (the issue from the --dataset its instances are in); repeatable",
    )
    ret.add_argument("--seed", type=int, default=0, help="the bootstrap's seed (default 0)")
    ret.add_argument(
        "--no-embed", action="store_true", help="the keyword map only (no embedding model)"
    )
    ret.set_defaults(func=_retrieval)
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
        if name == "calibrate":
            cmd.add_argument(
                "--out", type=Path,
                help="the candidates file to write (default REPORT/rounds.toml)",
            )  # fmt: skip
        cmd.set_defaults(func=func)


def _retrieval(ns: argparse.Namespace) -> int:
    from ..cli_inputs import say
    from .retrieval import evaluate, first_points, render, rows_of

    embedder = None
    if not ns.no_embed:
        from ..primitives.embedder import EmbedderUnavailable, load_embedder

        try:
            embedder = load_embedder()
        except EmbedderUnavailable as exc:
            print(f"note: embedding retrievers left out: {exc.reason}", file=sys.stderr)
    for source in ns.dataset or ["bundled"]:
        rows, malformed = rows_of(source)  # a source that cannot be read: InputError, exit 2
        say("retrieval", malformed)
        queries, skipped = first_points(rows)
        for why in skipped:
            print(f"note: left out: {why}", file=sys.stderr)
        title = (
            f"{source}: first decision points, {len(queries)} of {len(rows)} rows"
            f" (the rest name no tool first, or have no label)"
        )
        print(render(evaluate(queries, embedder, ns.seed), title))
        print()
        for report in ns.report or []:
            _later(report, rows, source, embedder, ns.seed)
    return 0


def _later(report: Path, rows: list[dict[str, Any]], source: str, embedder: Any, seed: int) -> None:
    from ..cli_inputs import say_skipped
    from ..types import read_trajectories
    from .retrieval import evaluate, later_points, render

    path = report / "trajectories.jsonl"
    if not path.is_file():
        print(f"note: {report}: no trajectories.jsonl", file=sys.stderr)
        return
    statements = {str(r["instance_id"]): str(r.get("problem_statement") or "") for r in rows}
    trajectories, skipped = read_trajectories(path)
    say_skipped("retrieval", skipped)
    queries = later_points(trajectories, statements)
    if not queries:
        print(f"{report}: no decision point past the first on the gold path (its policy runs"
              " left it at once, ended, or have no label)\n")  # fmt: skip
        return
    title = (
        f"{report}: decision points 1 and 2 of its policy runs on the gold path"
        f" ({len(queries)} points, issues from {source})"
    )
    print(render(evaluate(queries, embedder, seed), title))
    print()


def _split(ns: argparse.Namespace) -> Any:
    from .labels import Split

    if not 0 < ns.test_share < 1:
        raise SystemExit(f"toolpolicy: --test-share must be between 0 and 1, got {ns.test_share}")
    return Split(ns.seed, ns.test_share)


def _built(ns: argparse.Namespace, command: str) -> Any:
    """The report's labels, built and written, with the chosen source's label as the one to
    fit on (None: the report has none, said on stderr)."""
    from ..cli_inputs import say, say_skipped
    from .labels import LabelsError, build, choose

    labeler = _toolformer(ns, command)
    if labeler is not None:
        say_skipped(command, labeler.skipped)
    try:
        frame = build(ns.report, _split(ns), toolformer=labeler, note=lambda s: say(command, s))
    except LabelsError as exc:
        print(f"toolpolicy {command}: {exc}", file=sys.stderr)
        return None
    if labeler is not None:
        for error in labeler.errors:
            print(f"note: no Toolformer label: {error}", file=sys.stderr)
        print(f"Toolformer: {labeler.scored} calls scored by {labeler.scorer.name}"
              f" ({len(labeler.errors)} could not be)", file=sys.stderr)  # fmt: skip
    return choose(frame, getattr(ns, "label", "any"))


def _toolformer(ns: argparse.Namespace, command: str) -> Any:
    if not ns.toolformer:
        return None
    from ..cli_inputs import say
    from .retrieval import rows_of
    from .scorer import LocalScorer
    from .toolformer import CACHE, Labeler, ScoreError

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
    from .labels import FILE, summary

    frame = _built(ns, "labels")
    if frame is None:
        return 2
    print(summary(frame))
    print(f"written: {ns.report / FILE}")
    return 0


def _calibrate(ns: argparse.Namespace) -> int:
    from .calibrate import fit
    from .labels import summary
    from .rounds_file import render_report, write_candidates

    frame = _built(ns, "calibrate")
    if frame is None:
        return 2
    print(summary(frame))
    calibration = fit(frame, ns.seed)
    print(render_report(calibration))
    from .bandit import render, replay

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
    from .probe import render, score

    if not str(ns.model).startswith("local:"):
        print(render(None, f"{ns.model} exposes no hidden states; only local: models do"))
        return 0
    if ns.candidates is not None and ns.candidates.exists():
        from ..input_files import read_toml

        read_toml(ns.candidates)  # the file the probe is added to, before any fitting
    frame = _built(ns, "probe")
    if frame is None:
        return 2
    state = text_states_for(ns.model)  # its server starts with the first state asked for

    def embed(texts: list[str]) -> Any:
        states = [state(text) for text in texts]  # one at a time: each fills the batch
        if any(s is None for s in states):
            raise SystemExit(f"toolpolicy probe: no hidden states from {ns.model} (see above)")
        return np.asarray(states, dtype=float)

    result = score(frame, embed, seed=ns.seed)
    print(render(result))
    if result.probe is not None:
        from .rounds_file import add_probe

        written = add_probe(ns.report, result.probe, ns.candidates)
        print(
            f"probe: {written}" + (f", candidate added to {ns.candidates}" if ns.candidates else "")
        )
    return 0
