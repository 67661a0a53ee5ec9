"""Row 13, measured: how well each retriever ranks the six tools against the gold labels.

A query is what retrieval sees at a decision point (spec §4.2: the issue, and the latest
observation when there is one); its relevant tools are the gold label's set at that point.
Points whose gold move is ``ask_user`` or ``stop`` name no tool and are left out. Each
retriever ranks all six tools:

- ``keyword``: the static map (``policy/retrieve.py``): keyword count, then registry order;
- ``embed``: cosine between the query and each tool's ``description + keywords`` (the
  embedding fallback's ranking, over all six);
- ``hybrid``: keyword hits first by count, ties and the rest by cosine.

NDCG@5 (binary relevance, ideal = every relevant tool first) and recall@5 per point, averaged.
Pure but for the embedder, which is passed in.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..bench.dataset_input import dataset_note, load_dataset
from ..bench.gold import GOLD_DIR, hand_label
from ..bench.gold_derive import derive
from ..bench.gold_source import label_for
from ..decide.stats import paired_bootstrap
from ..input_files import RecordError, read_jsonl
from ..policy.registry import TOOL_NAMES
from ..policy.retrieve import keyword_scores, rank_by_cosine, tool_text
from ..policy.retrieve import rank_hybrid as policy_hybrid
from ..primitives.embedder import TextEmbedder
from ..run.selection import moves
from ..types import Observation, Trajectory

K = 5
RETRIEVERS = ("keyword", "embed", "hybrid")


@dataclass(frozen=True)
class Query:
    instance_id: str
    point: int  # the decision point (0-based)
    text: str  # what retrieval sees: the issue, and the latest observation
    relevant: frozenset[str]  # the gold label's tools at this point


def rank_keyword(text: str) -> list[str]:
    scores = keyword_scores(text)
    order = {name: i for i, name in enumerate(TOOL_NAMES)}
    return sorted(TOOL_NAMES, key=lambda n: (-scores[n], order[n]))


def rank_hybrid(text: str, cosine: Sequence[float]) -> list[str]:
    return policy_hybrid(keyword_scores(text), cosine)


def ndcg_at(ranked: Sequence[str], relevant: frozenset[str], k: int = K) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, name in enumerate(ranked[:k]) if name in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(k, len(relevant))))
    return dcg / ideal if ideal else 0.0


def recall_at(ranked: Sequence[str], relevant: frozenset[str], k: int = K) -> float:
    return len(set(ranked[:k]) & relevant) / len(relevant) if relevant else 0.0


@dataclass(frozen=True)
class Scored:
    retriever: str
    queries: int
    ndcg: float
    recall: float
    ndcg_ci: tuple[float, float]  # 95% bootstrap interval of the mean, over queries
    recall_ci: tuple[float, float]


def bootstrap_ci(values: Sequence[float], seed: int = 0, draws: int = 2000) -> tuple[float, float]:
    """The 95% percentile interval of the mean, resampling ``values`` (seeded): the A/B's own
    bootstrap, against zero."""
    return paired_bootstrap(values, np.zeros(len(values)), n=draws, seed=seed)


def evaluate(
    queries: Sequence[Query], embedder: TextEmbedder | None, seed: int = 0
) -> list[Scored]:
    """Mean NDCG@5 and recall@5 of each retriever over ``queries`` (the embedding ones only
    with an embedder), each with its bootstrap interval."""
    usable = [q for q in queries if q.relevant & set(TOOL_NAMES)]
    rankings: dict[str, list[list[str]]] = {"keyword": [rank_keyword(q.text) for q in usable]}
    if embedder is not None and usable:
        tools = np.asarray(embedder.embed([tool_text(n) for n in TOOL_NAMES]))
        asked = np.asarray(embedder.embed([q.text.strip() or " " for q in usable]))
        cosines = asked @ tools.T
        rankings["embed"] = [rank_by_cosine(c) for c in cosines]
        rankings["hybrid"] = [rank_hybrid(q.text, c) for q, c in zip(usable, cosines, strict=True)]
    out = []
    for name, ranked in rankings.items():
        ndcg = [ndcg_at(r, q.relevant) for r, q in zip(ranked, usable, strict=True)]
        recall = [recall_at(r, q.relevant) for r, q in zip(ranked, usable, strict=True)]
        out.append(
            Scored(
                retriever=name,
                queries=len(ndcg),
                ndcg=float(np.mean(ndcg)) if ndcg else float("nan"),
                recall=float(np.mean(recall)) if recall else float("nan"),
                ndcg_ci=bootstrap_ci(ndcg, seed),
                recall_ci=bootstrap_ci(recall, seed),
            )
        )
    return out


def render(scored: Sequence[Scored], title: str) -> str:
    lines = [f"{title}", "", "| retriever | queries | NDCG@5 [95% CI] | recall@5 [95% CI] |",
             "|---|---|---|---|"]  # fmt: skip
    for s in scored:
        lines.append(
            f"| {s.retriever} | {s.queries} | {s.ndcg:.3f} [{s.ndcg_ci[0]:.3f}, {s.ndcg_ci[1]:.3f}]"
            f" | {s.recall:.3f} [{s.recall_ci[0]:.3f}, {s.recall_ci[1]:.3f}] |"
        )
    return "\n".join(lines)


def rows_of(source: str) -> tuple[list[dict[str, Any]], str]:
    """Rows with ``instance_id``, ``problem_statement`` and ``patch``: from a JSON-lines file
    (SWE-bench's rows; test fields not needed), else from a dataset as ``--toolpolicy-dataset``
    names one. Also one line saying which malformed rows were skipped ("" for none); a source
    that cannot be read at all is an ``InputError``."""
    path = Path(source)
    if path.suffix == ".jsonl" and path.is_file():
        rows, skipped = read_jsonl(path, _row)
        return rows, skipped.summary()
    loaded = load_dataset(source, require_tests=False)
    rows = [
        {"instance_id": i.instance_id, "problem_statement": i.problem_statement,
         "patch": i.patch, "underspecified": i.underspecified}
        for i in loaded.instances
    ]  # fmt: skip
    return rows, dataset_note(source, loaded.errors)


def _row(row: Any) -> dict[str, Any]:
    """A SWE-bench row as retrieval reads it: its id, and its text fields where it has them."""
    if not isinstance(row, dict) or not isinstance(row.get("instance_id"), str):
        raise RecordError("no instance_id")
    for key in ("problem_statement", "patch"):
        if not isinstance(row.get(key) or "", str):
            raise RecordError(f"{key} is not a string")
    return row


def first_points(
    rows: Iterable[Mapping[str, Any]], gold_dir: Path | None = GOLD_DIR
) -> tuple[list[Query], list[str]]:
    """The first decision point of each row: the issue as the query, the gold label's first set
    (hand-written, else derived from the gold patch) as what is relevant. Also the rows left
    out, each with why."""
    queries, skipped = [], []
    for row in rows:
        instance_id = str(row["instance_id"])
        statement = str(row.get("problem_statement") or "")
        label = hand_label(instance_id, gold_dir)
        if label is None:
            derived = derive(instance_id, statement, str(row.get("patch") or ""),
                             underspecified=bool(row.get("underspecified")))  # fmt: skip
            label = derived.label
            if label is None:
                skipped.append(f"{instance_id}: no label ({derived.reason})")
                continue
        first = label.decisions[0]
        if not first & set(TOOL_NAMES):
            skipped.append(f"{instance_id}: its first move is {sorted(first)[0]}")
            continue
        queries.append(Query(instance_id, 0, statement, first))
    return queries, skipped


def later_points(
    trajectories: Iterable[Trajectory],
    statements: Mapping[str, str],
    gold_dir: Path | None = GOLD_DIR,
) -> list[Query]:
    """Decision points 1 and 2 of the policy's runs (first trial, first selections), where
    every earlier selection was in its gold set: the run is on the gold path, so the label's
    set at this point applies. The query is what retrieval saw then (spec §4.2): the issue and
    the latest ledger entry, rebuilt from the turns before (and this turn's symbol trigger,
    which fires before the selection)."""
    out: list[Query] = []
    for trajectory in trajectories:
        statement = statements.get(trajectory.instance_id)
        if trajectory.variant != "policy" or statement is None:
            continue
        if int(trajectory.meta.get("trial") or 1) != 1:
            continue
        gold = label_for(trajectory.instance_id, gold_dir, trajectory.meta).label
        if gold is None:
            continue
        seen = moves(trajectory)
        latest: Observation | None = None
        for point, turn in enumerate(trajectory.turns[: len(gold.decisions)]):
            if turn.extra_selections:  # a re-selection: decision points no longer line up
                break
            leading = [o for o in turn.observations if o.source == "trigger" and o.kind == "symbol"]
            latest = leading[-1] if leading else latest
            relevant = gold.decisions[point] & set(TOOL_NAMES)
            if point > 0 and relevant:
                text = f"{statement} {latest.line() if latest else ''}"
                out.append(Query(trajectory.instance_id, point, text, relevant))
            if point >= len(seen) or not seen[point] & gold.decisions[point]:
                break  # off the gold path: later labels no longer apply
            if turn.observations:
                latest = turn.observations[-1]
    return out
