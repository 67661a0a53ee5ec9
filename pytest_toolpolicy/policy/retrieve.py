"""Retrieval (spec §4.2): the candidate toolset, at most five of the six tools.

The primary mechanism is the static keyword map: a tool's score is how many of its keywords occur
(case-insensitive substring) in ``issue_text + " " + latest_observation``. Every tool scoring ≥ 1
is kept, ranked by score then registry order; when none scores, the observe-only default 4 is
presented. Behind ``retrieve.embed`` (off by default) an empty map result is instead ranked by
cosine between the query and each tool's ``description + " " + keywords`` with the project's
offline embedder, keeping the top 4. Without ``retrieve.top5`` all six tools are presented.
The ``hybrid`` ranking (``PolicyConfig.ranking``, a candidate of row 13, never the default)
presents the top five of all six: keyword hits first by count, ties and the rest by cosine.

Pure: the embedder is passed in (an embedder, or a zero-argument loader called only when the
fallback actually fires), so the default path never touches a model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import cast

import numpy as np

from ..primitives.embedder import EmbedderUnavailable, TextEmbedder
from .config import PolicyConfig
from .registry import REGISTRY, TOOL_NAMES

CAP = 5
DEFAULT_4: tuple[str, ...] = ("read_entity", "search_symbol", "search_code", "run_test")
EMBED_TOP = 4

EmbedderSource = TextEmbedder | Callable[[], TextEmbedder]

# Tool vectors depend only on the registry and the model, so they are computed once per model id.
_TOOL_VECTORS: dict[str, np.ndarray] = {}


@dataclass(frozen=True)
class Candidates:
    """The tools to present, in order. ``scores`` holds every tool's score (keyword count, or
    rounded cosine under the embedding fallback); ``fallback`` names the fallback used, if any:
    ``"default-4"``, ``"embed"`` or ``"default-4 (embedder unavailable: <reason>)"``."""

    tools: tuple[str, ...]
    truncated: bool = False
    scores: Mapping[str, int | float] = field(default_factory=dict)
    fallback: str | None = None


def keyword_scores(text: str) -> dict[str, int]:
    """Each tool's count of keywords found in ``text`` (case-insensitive substring)."""
    hay = text.lower()
    return {
        name: sum(word.lower() in hay for word in REGISTRY[name]["keywords"]) for name in TOOL_NAMES
    }


def retrieve(
    issue_text: str,
    latest_observation: str,
    config: PolicyConfig,
    embedder: EmbedderSource | None = None,
) -> Candidates:
    if not config.on("retrieve.top5"):
        return Candidates(tools=TOOL_NAMES)
    query = f"{issue_text} {latest_observation}"
    scores = keyword_scores(query)
    if config.ranking == "hybrid" and query.strip():
        hybrid = _hybrid(query, embedder, scores)
        if hybrid is not None:
            return hybrid
    order = {name: i for i, name in enumerate(TOOL_NAMES)}
    hits = sorted((n for n in TOOL_NAMES if scores[n] >= 1), key=lambda n: (-scores[n], order[n]))
    if hits:
        return Candidates(tools=tuple(hits[:CAP]), truncated=len(hits) > CAP, scores=scores)
    if config.on("retrieve.embed") and query.strip():
        return _embed_fallback(query, embedder, scores)
    return Candidates(tools=DEFAULT_4, scores=scores, fallback="default-4")


def _embed_fallback(
    query: str, source: EmbedderSource | None, scores: dict[str, int]
) -> Candidates:
    try:
        if source is None:
            raise EmbedderUnavailable("no embedder given")
        embedder = _loaded(source)
        tools = _tool_vectors(embedder)
        cosine = tools @ embedder.embed([query.strip()])[0]
    except EmbedderUnavailable as exc:
        why = f"default-4 (embedder unavailable: {exc.reason})"
        return Candidates(tools=DEFAULT_4, scores=scores, fallback=why)
    rounded = {name: round(float(c), 6) for name, c in zip(TOOL_NAMES, cosine, strict=True)}
    top = tuple(rank_by_cosine(cosine)[:EMBED_TOP])
    return Candidates(tools=top, scores=rounded, fallback="embed")


def rank_by_cosine(cosine: Sequence[float]) -> list[str]:
    """All six tools by cosine, rounded so float noise between runs cannot reorder near-ties;
    ties go to registry order."""
    rounded = [round(float(c), 6) for c in cosine]
    return [TOOL_NAMES[i] for i in sorted(range(len(TOOL_NAMES)), key=lambda i: (-rounded[i], i))]


def rank_hybrid(scores: Mapping[str, int], cosine: Sequence[float]) -> list[str]:
    """All six tools: keyword hits first by count, ties and the rest by cosine."""
    by_cosine = {name: i for i, name in enumerate(rank_by_cosine(cosine))}
    return sorted(TOOL_NAMES, key=lambda n: (-scores[n], by_cosine[n]))


def _hybrid(query: str, source: EmbedderSource | None, scores: dict[str, int]) -> Candidates | None:
    """The hybrid ranking's top five, or None (the map decides) without an embedder."""
    try:
        if source is None:
            raise EmbedderUnavailable("no embedder given")
        embedder = _loaded(source)
        cosine = _tool_vectors(embedder) @ embedder.embed([query.strip()])[0]
    except EmbedderUnavailable:
        return None
    ranked = rank_hybrid(scores, cosine)
    return Candidates(tools=tuple(ranked[:CAP]), truncated=True, scores=scores, fallback="hybrid")


def _loaded(source: EmbedderSource) -> TextEmbedder:
    """The embedder given, or the one its zero-argument loader returns (called only now)."""
    if hasattr(source, "embed"):  # duck-typed: anything with ``embed`` is the embedder itself
        return cast(TextEmbedder, source)
    return source()


def tool_text(name: str) -> str:
    """What the embedding fallback embeds for a tool: ``description + " " + keywords``."""
    entry = REGISTRY[name]
    return f"{entry['description']} {' '.join(entry['keywords'])}"


def _tool_vectors(embedder: TextEmbedder) -> np.ndarray:
    key = getattr(embedder, "model_id", None) or f"id:{id(embedder)}"
    if key not in _TOOL_VECTORS:
        _TOOL_VECTORS[key] = np.asarray(embedder.embed([tool_text(n) for n in TOOL_NAMES]))
    return _TOOL_VECTORS[key]
