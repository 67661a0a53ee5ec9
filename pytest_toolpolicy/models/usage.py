"""A provider's ``usage`` block, read into ``Usage`` (a pure function, no I/O).

Where providers put the cached part of the prompt:

- OpenAI (and vLLM, when it reports it): ``usage.prompt_tokens_details.cached_tokens``.
- DeepSeek: ``usage.prompt_cache_hit_tokens`` beside ``prompt_cache_miss_tokens``; hit + miss is
  the prompt, which stands in for ``prompt_tokens`` when a server omits that.

A response without usage (or with none of the counts) gives ``Usage(missing=True)``: zeros that
mean *unknown*, which the price table turns into an unknown cost rather than $0. A count that is
absent or null is not reported. A count that is reported but is no token count (negative, not a
whole number, NaN, above ``MAX_TOKENS``, a string, a boolean) raises ``UsageError`` naming the
field: the endpoint is misbehaving, and pricing a guess would put a wrong (or infinite) cost in
the measures, so the call fails as a model error instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import Usage

# Far above any context window of today (a few million tokens): a count past it is garbage, and
# keeping counts this small keeps every cost computed from them finite.
MAX_TOKENS = 10**9

_KEYS = (
    "prompt_tokens",
    "completion_tokens",
    "prompt_tokens_details",
    "prompt_cache_hit_tokens",
    "prompt_cache_miss_tokens",
)
_COUNTS = ("prompt_tokens", "completion_tokens", "cached_prompt_tokens")


class UsageError(ValueError):
    """A reported token count that is no token count; the message names the field and value."""


def usage_from(reported: object) -> Usage:
    """``Usage`` from the SDK's usage object, its dict form, or None; ``UsageError`` for a count
    that is no token count."""
    data = _as_dict(reported, _KEYS)
    prompt = _count(data, "prompt_tokens")
    completion = _count(data, "completion_tokens")
    hit = _count(data, "prompt_cache_hit_tokens")
    miss = _count(data, "prompt_cache_miss_tokens")
    details = _as_dict(data.get("prompt_tokens_details"), ("cached_tokens",))
    cached = _count(details, "cached_tokens", "prompt_tokens_details.")
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


def check_usage(usage: Usage) -> None:
    """``UsageError`` unless each count of ``usage`` is an integer from 0 to ``MAX_TOKENS``
    (for a ``Usage`` built elsewhere than ``usage_from``, e.g. from a script)."""
    for name in _COUNTS:
        value = getattr(usage, name)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKENS:
            raise UsageError(_refusal(f"usage.{name}", value))


def _as_dict(value: object, keys: tuple[str, ...]) -> dict[str, Any]:
    if value is None:
        return {}
    if isinstance(value, Mapping):
        return dict(value)
    # Attributes, not model_dump(): the SDK's pydantic models keep a provider's own fields
    # (DeepSeek's) as extras, readable so, and dumping a malformed count would only warn.
    return {key: getattr(value, key) for key in keys if hasattr(value, key)}


def _count(data: Mapping[str, Any], key: str, prefix: str = "") -> int | None:
    value = data.get(key)
    if value is None:
        return None
    whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if isinstance(value, bool) or not whole or not 0 <= value <= MAX_TOKENS:
        raise UsageError(_refusal(f"usage.{prefix}{key}", value))
    return int(value)


def _refusal(field: str, value: object) -> str:
    if isinstance(value, int) and value.bit_length() > 64:
        # repr() of a huge int is slow, or refused past 4300 digits.
        shown = f"an integer of {value.bit_length()} bits"
    else:
        shown = repr(value)
        shown = shown if len(shown) <= 40 else shown[:40] + "…"
    return f"{field} is {shown}, not a token count (an integer from 0 to {MAX_TOKENS:,})"
