"""``read_entity``: an entity's record and, on request, its source windowed to ``window`` lines.

The entity's file is checked (``CodeIndex.sync``, one lstat) before its record is given, so the
spans match the file as it is even if something changed it since the last refresh; its source
is read through ``safefs``, so a file that became a link, a FIFO or a huge file is refused with
the reason and nothing of what it points to is read.
"""

from __future__ import annotations

from .codeindex import CodeIndex, Entity, is_selector
from .envelope import Envelope, PrimitiveError, fail, ok
from .search_symbol import is_import_path


def resolve(index: CodeIndex, selector: str) -> Entity:
    """The entity for ``selector`` as its file is now, or a PrimitiveError naming what is wrong
    with it (a refused or removed file says so)."""
    if not is_selector(selector):
        raise PrimitiveError(
            f"invalid selector {selector!r}: a selector is a dotted module path plus qualname, "
            "e.g. memstore.MemStore.remember"
        )
    entity = index.get(selector)
    if entity is not None and index.sync(entity.file):
        entity = index.get(selector)  # re-indexed: its spans may have moved, or it is gone
    if entity is None:
        why = index.why_missing(selector)
        if why is not None:
            raise PrimitiveError(f"{selector} is unavailable: {why}")
        last = selector.rsplit(".", 1)[-1]
        near = sorted(
            e.selector
            for e in index.entities()
            if e.name == last and is_import_path(selector, e.selector)
        )
        hint = f" (did you mean {' or '.join(near[:3])}?)" if near else ""
        raise PrimitiveError(f"unknown selector {selector}{hint}")
    return entity


def read_entity(index: CodeIndex, selector: str, body: bool = False, window: int = 100) -> Envelope:
    """data = ``{"entity": record, "body": str | None, "lines": [first, last] | None,
    "truncated": bool}``; ``body`` holds at most ``window`` lines from the entity's first line."""
    try:
        entity = resolve(index, selector)
        text = index.read_source(entity.file) if body else None
    except PrimitiveError as exc:
        return fail(str(exc))
    data: dict[str, object] = {"entity": entity.record(), "body": None, "lines": None}
    data["truncated"] = False
    if text is not None:
        lines = text.splitlines()[entity.start - 1 : entity.end]
        shown = lines[:window]
        data["body"] = "\n".join(shown)
        data["lines"] = [entity.start, entity.start + len(shown) - 1]
        data["truncated"] = len(lines) > window
    return ok(data)
