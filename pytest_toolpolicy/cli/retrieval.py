"""``toolpolicy retrieval``: row 13 measured (``rounds/retrieval.py``), each retriever's NDCG@5
and recall@5 against the gold labels, on a dataset's first decision points and, with
``--report``, on decision points 1 and 2 of a report's policy runs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


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


def _retrieval(ns: argparse.Namespace) -> int:
    from ..rounds.retrieval import evaluate, first_points, render, rows_of
    from .inputs import say

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
    from ..rounds.retrieval import evaluate, later_points, render
    from ..types import read_trajectories
    from .inputs import say_skipped

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
