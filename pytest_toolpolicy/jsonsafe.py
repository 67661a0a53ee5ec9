"""JSON for what a model or a workspace produced: it always encodes, and always as valid UTF-8.

Model replies and captured program output can hold lone surrogates (``"\\ud800"`` in a reply's
JSON, bytes decoded with ``surrogateescape``) and arbitrarily deep nesting. ``json.dumps`` then
either writes text that cannot be saved as UTF-8 or raises ``RecursionError``, and a finished
result would be lost to how it is written. Here the offending values are escaped instead: a lone
surrogate becomes the six characters ``\\udXXX``, and nesting past ``MAX_DEPTH`` becomes a string
that says it was cut. Values that encode cleanly come out exactly as ``json.dumps`` writes them.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 64


def dumps(value: Any, **kwargs: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, default=str, **kwargs)``, escaped where needed so
    that the result is valid UTF-8 and ``json.loads`` reads it back."""
    options: dict[str, Any] = {"ensure_ascii": False, "default": str, **kwargs}
    try:
        text = json.dumps(value, **options)
        text.encode("utf-8")
        return text
    except (UnicodeEncodeError, RecursionError, ValueError):
        return json.dumps(clean(value), **options)


def clean(value: Any, depth: int = 0) -> Any:
    """A copy of ``value`` with lone surrogates escaped and nesting cut at ``MAX_DEPTH``."""
    if isinstance(value, str):
        return escape(value)
    if isinstance(value, (bool, int, float)) or value is None:
        return value
    if depth >= MAX_DEPTH:
        return f"[nested deeper than {MAX_DEPTH} levels; cut]"
    if isinstance(value, dict):
        return {escape(str(k)): clean(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v, depth + 1) for v in value]
    return escape(str(value))


def escape(text: str) -> str:
    """``text`` with each lone surrogate written as its ``\\udXXX`` escape."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", errors="backslashreplace").decode("utf-8")
