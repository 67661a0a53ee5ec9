"""A provider's ``usage`` block, read into ``Usage`` (a pure function, no I/O).

Where providers put the cached part of the prompt:

- OpenAI (and vLLM, when it reports it): ``usage.prompt_tokens_details.cached_tokens``.
- DeepSeek: ``usage.prompt_cache_hit_tokens`` beside ``prompt_cache_miss_tokens``; hit + miss is
  the prompt, which stands in for ``prompt_tokens`` when a server omits that.

A response without usage (or with none of the counts) gives ``Usage(missing=True)``: zeros that
mean *unknown*, which the price table turns into an unknown cost rather than $0. A count that is
absent, null or not a non-negative number reads as 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import Usage

_KEYS = (
    "prompt_tokens",
    "completion_tokens",
    "prompt_tokens_details",
    "prompt_cache_hit_tokens",
    "prompt_cache_miss_tokens",
)


def usage_from(reported: object) -> Usage:
    """``Usage`` from the SDK's usage object, its dict form, or None."""
    data = _as_dict(reported)
    prompt = _count(data.get("prompt_tokens"))
    completion = _count(data.get("completion_tokens"))
    hit = _count(data.get("prompt_cache_hit_tokens"))
    miss = _count(data.get("prompt_cache_miss_tokens"))
    details = _as_dict(data.get("prompt_tokens_details"))
    cached = _count(details.get("cached_tokens"))
    if cached is None:
        cached = hit
    if prompt is None and (hit is not None or miss is not None):
        prompt = (hit or 0) + (miss or 0)
    if prompt is None and completion is None:
        return Usage(missing=True)
    prompt = prompt or 0
    # A cached count above the prompt is a provider bug; never price more tokens than were sent.
    return Usage(
        prompt_tokens=prompt,
        completion_tokens=completion or 0,
        cached_prompt_tokens=min(cached or 0, prompt),
    )


def _as_dict(value: object) -> dict[str, Any]:
    if value is None:
        return {}
    if isinstance(value, Mapping):
        return dict(value)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        # The SDK's pydantic models keep fields they do not know (DeepSeek's) as extras.
        dumped = dump()
        if isinstance(dumped, Mapping):
            return dict(dumped)
    return {key: getattr(value, key) for key in _KEYS if hasattr(value, key)}


def _count(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        return None
    return int(value)
