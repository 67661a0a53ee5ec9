"""Token figures for the simulator, labelled as estimates.

Prompts are counted with the real ``tokenizer.json`` of the offline embedding model (through
``tokenizers``); when it is unavailable the count falls back to chars/4, a common rule of thumb
for English and code, and ``TokenCounter.method`` says so. Cached prompt tokens follow providers'
prefix caches: the longest token prefix shared with an earlier request of the same run (same item
and arm), so a growing history is credited its reuse and a re-assembled prompt is not.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any

from ..base import Usage

_CHARS_PER_TOKEN = 4


def render(messages: Sequence[dict[str, str]]) -> str:
    """The chat as one text, roughly as a chat template lays it out."""
    return "".join(f"<|{m.get('role', '')}|>\n{m.get('content', '')}\n" for m in messages)


class TokenCounter:
    def __init__(self) -> None:
        self._tokenizer: Any = None
        self.method = ""
        self._seen: dict[tuple[str, str], list[tuple[int, ...]]] = {}

    def _load(self) -> None:
        if self.method:
            return
        try:
            from tokenizers import Tokenizer

            from ...primitives.embedder import model_dir

            self._tokenizer = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
            self._tokenizer.no_truncation()
            self._tokenizer.no_padding()
            self.method = "tokenizer.json of the embedding model"
        except Exception as exc:  # any failure to load means the documented fallback
            self.method = f"chars/4 estimate (tokenizer unavailable: {type(exc).__name__})"

    def ids(self, text: str) -> tuple[int, ...]:
        self._load()
        if self._tokenizer is not None:
            return tuple(self._tokenizer.encode(text, add_special_tokens=False).ids)
        # Stand-in ids: one per 4-char chunk, equal when the chunks are, so prefixes still match.
        return tuple(
            hash(text[i : i + _CHARS_PER_TOKEN]) for i in range(0, len(text), _CHARS_PER_TOKEN)
        )

    def usage(self, run: tuple[str, str], messages: Sequence[dict[str, str]], reply: str) -> Usage:
        prompt = self.ids(render(messages))
        # Kept sorted: the longest prefix shared with any earlier request is shared with one
        # of the new prompt's two neighbours in lexicographic order, so two comparisons do.
        earlier = self._seen.setdefault(run, [])
        at = bisect.bisect_left(earlier, prompt)
        cached = max((_shared(prompt, e) for e in earlier[max(0, at - 1) : at + 1]), default=0)
        earlier.insert(at, prompt)
        return Usage(
            prompt_tokens=len(prompt),
            completion_tokens=max(1, len(self.ids(reply))),
            cached_prompt_tokens=cached,
            estimated=True,
        )


def _shared(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    """The length of the longest common prefix: a binary search over slice comparisons, which
    run in C, since a run compares every request with all earlier ones."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low
