"""Token figures for the simulator, labelled as estimates.

Prompts are counted with the real ``tokenizer.json`` of the offline embedding model (through
``tokenizers``); when it is unavailable the count falls back to chars/4, a common rule of thumb
for English and code, and ``TokenCounter.method`` says so. Cached prompt tokens follow providers'
prefix caches: the longest token prefix shared with an earlier request of the same run (same item
and arm), so a growing history is credited its reuse and a re-assembled prompt is not.
"""

from __future__ import annotations

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
        earlier = self._seen.setdefault(run, [])
        cached = max((_shared(prompt, e) for e in earlier), default=0)
        earlier.append(prompt)
        return Usage(
            prompt_tokens=len(prompt),
            completion_tokens=max(1, len(self.ids(reply))),
            cached_prompt_tokens=cached,
            estimated=True,
        )


def _shared(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n
