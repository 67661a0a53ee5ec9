"""JSON for what a model or a workspace produced: it always encodes, and always as valid UTF-8.

Model replies and captured program output can hold lone surrogates (``"\\ud800"`` in a reply's
JSON, bytes decoded with ``surrogateescape``) and arbitrarily deep nesting. ``json.dumps`` then
either writes text that cannot be saved as UTF-8 or raises ``RecursionError``, and a finished
result would be lost to how it is written. Here the offending values are escaped instead: a lone
surrogate becomes the six characters ``\\udXXX``, and nesting deeper than ``json.dumps`` can go is
cut at ``MAX_DEPTH``, in a string that says so. Values that encode cleanly come out exactly as
``json.dumps`` writes them.

``exact`` is for what must read back equal instead (a cache key, a recorded reply): the same
text where it encodes, otherwise ``ensure_ascii`` JSON, whose ``\\ud800`` escapes ``json.loads``
turns back into the lone surrogate.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

MAX_DEPTH = 64
_EXIT = object()  # marks, on clean()'s work stack, that a container's children are all done


def dumps(value: Any, **kwargs: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, default=str, **kwargs)``, escaped where needed so
    that the result is valid UTF-8 and ``json.loads`` reads it back."""
    options: dict[str, Any] = {"ensure_ascii": False, "default": str, **kwargs}
    try:
        text = json.dumps(value, **options)
    # Too deep, a cycle ("Circular reference detected") or a key json cannot write (a tuple):
    # clean() cuts the first two and writes the key as its str(). NaN with allow_nan=False is a
    # ValueError too, and stays one: clean() keeps floats as they are.
    except (RecursionError, ValueError, TypeError):
        return json.dumps(clean(value, default=options["default"]), **options)
    if _encodes(text):
        return text
    # Only surrogates are wrong, and json.dumps managed this depth: cut nothing.
    return json.dumps(clean(value, default=options["default"], max_depth=None), **options)


def exact(value: Any, **kwargs: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, **kwargs)`` where that is valid UTF-8, else the
    ``ensure_ascii=True`` form: ``json.loads`` gives back an equal value, lone surrogates
    included. Raises what ``json.dumps`` raises (nothing is cut)."""
    text = json.dumps(value, **{**kwargs, "ensure_ascii": False})
    return text if _encodes(text) else json.dumps(value, **{**kwargs, "ensure_ascii": True})


def _encodes(text: str) -> bool:
    # isascii() reads a flag CPython keeps, while encoding a megabyte of JSON into a fresh
    # buffer costs 40% of writing it: the common all-ASCII text is never encoded here.
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def clean(
    value: Any,
    depth: int = 0,
    *,
    max_depth: int | None = MAX_DEPTH,
    default: Callable[[Any], Any] | None = str,
) -> Any:
    """A copy of ``value`` that ``json.dumps`` writes as valid UTF-8: lone surrogates escaped,
    containers nested ``max_depth`` levels deep (``depth`` counts as already used) replaced by a
    string saying they were cut, a container inside itself replaced likewise, other objects
    converted by ``default`` as ``json.dumps`` would (None: ``TypeError``).

    It walks an explicit stack, not the Python one, so no depth makes it raise."""
    root: list[Any] = [None]
    ancestors: set[int] = set()
    todo: list[tuple[Any, Any, Any, int]] = [(value, root, 0, depth)]
    while todo:
        item, target, slot, level = todo.pop()
        if target is _EXIT:
            ancestors.discard(item)
            continue
        if not isinstance(item, (str, int, float, dict, list, tuple)) and item is not None:
            if default is None:
                raise TypeError(f"Object of type {type(item).__name__} is not JSON serializable")
            item = default(item)
            if not isinstance(item, (str, int, float, dict, list, tuple)) and item is not None:
                item = str(item)
        if isinstance(item, str):
            target[slot] = escape(item)
        elif not isinstance(item, (dict, list, tuple)):
            target[slot] = item  # int, float (NaN and inf too), bool, None: json writes them
        elif max_depth is not None and level >= max_depth:
            target[slot] = f"[nested deeper than {max_depth} levels; cut]"
        elif id(item) in ancestors:
            target[slot] = "[a container inside itself; cut]"
        else:
            ancestors.add(id(item))
            todo.append((id(item), _EXIT, None, level))
            if isinstance(item, dict):
                copy: dict[Any, Any] = {}
                for key, child in item.items():
                    written = _key(key)
                    copy[written] = None  # the key's place in the order now, its value later
                    todo.append((child, copy, written, level + 1))
                target[slot] = copy
            else:
                items: list[Any] = [None] * len(item)
                todo.extend((child, items, i, level + 1) for i, child in enumerate(item))
                target[slot] = items
    return root[0]


def _key(key: Any) -> Any:
    if isinstance(key, str):
        return escape(key)
    if isinstance(key, (int, float)) or key is None:
        return key  # json.dumps writes these keys itself ("1", "true", "null")
    return escape(str(key))


def escape(text: str) -> str:
    """``text`` with each lone surrogate written as its ``\\udXXX`` escape (a high and a low
    surrogate side by side are joined into the character they encode)."""
    if _encodes(text):
        return text
    joined = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return joined.encode("utf-8", errors="backslashreplace").decode("utf-8")
