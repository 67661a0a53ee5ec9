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

``loads`` is the way in for JSON that something outside wrote (an endpoint's body, a model's
reply, a script or cache file): ``json.loads`` recurses once per level, so 200,000 ``[`` raise
``RecursionError`` from deep inside it, and a value a few hundred levels deep that does decode
overflows whatever walks it next. ``loads`` measures the nesting first, in linear time, and
refuses more than ``MAX_DEPTH`` levels with ``TooDeep``, a ``ValueError`` like every other reason
the text is not usable JSON.
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Callable
from itertools import accumulate
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


class TooDeep(ValueError):
    """JSON text nested deeper than its bound, refused before it is decoded."""

    def __init__(self, max_depth: int) -> None:
        super().__init__(f"nested deeper than {max_depth} levels")
        self.max_depth = max_depth


# A JSON string, or the rest of the text when its closing quote never comes. Each of its parts
# stops where the next must begin, so it never backtracks and always matches: removing every
# string is one linear pass, however hostile the quoting.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
# An opening bracket counts +1 and a closing one -1, as signed bytes.
_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")


def depth(text: str | bytes | bytearray) -> int:
    """How many containers deep the JSON ``text`` nests, brackets inside strings not counted.

    Linear in the length of ``text`` and recursion-free. On text that is not JSON it is still an
    upper bound of how deep a decoder gets before it fails, since up to its first error the
    decoder sees the same strings and brackets."""
    steps = _STRING.sub(b"", _utf8(text)).translate(None, _NOT_BRACKETS).translate(_STEPS)
    return max(0, max(accumulate(array("b", steps)), default=0))


def check_depth(text: str | bytes | bytearray, max_depth: int = MAX_DEPTH) -> None:
    """``TooDeep`` if ``text`` nests deeper than ``max_depth`` levels (see ``depth``)."""
    # The number of opening brackets bounds the depth (a UTF-16 text's bytes hold at least as
    # many): most texts are done with two counts.
    if isinstance(text, str):
        opened = text.count("[") + text.count("{")
    else:
        opened = text.count(b"[") + text.count(b"{")
    if opened > max_depth and depth(text) > max_depth:
        raise TooDeep(max_depth)


def _utf8(text: str | bytes | bytearray) -> bytes:
    """``text`` as UTF-8 bytes, bytes read in the encoding ``json.loads`` would read them in."""
    if not isinstance(text, str):
        encoding = json.detect_encoding(text)
        if encoding in ("utf-8", "utf-8-sig"):
            return bytes(text)
        # UTF-16 or -32: their bytes can look like a quote or a bracket in mid-character.
        text = bytes(text).decode(encoding, "surrogatepass")
    # Every character that matters here is ASCII, which UTF-8 never uses inside a longer
    # sequence; surrogatepass keeps a lone surrogate from stopping the count.
    return text.encode("utf-8", "surrogatepass")


def loads(text: str | bytes | bytearray, *, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads(text)``, refusing with ``TooDeep`` (a ``ValueError``) what nests deeper
    than ``max_depth`` levels. Other refusals are ``json.loads``'s own ``ValueError``s: its
    ``JSONDecodeError``, or an integer past Python's digit limit."""
    check_depth(text, max_depth)
    return json.loads(text)
