"""``read_entity``: an entity's record and, on request, its source windowed to ``window`` lines."""

from __future__ import annotations

from .codeindex import CodeIndex, is_selector, read_text
from .envelope import Envelope, PrimitiveError, fail, ok
from .search_symbol import is_import_path


def resolve(index: CodeIndex, selector: str):
    """The entity for ``selector``, or a PrimitiveError naming what is wrong with it."""
    if not is_selector(selector):
        raise PrimitiveError(
            f"invalid selector {selector!r}: a selector is a dotted module path plus qualname, "
            "e.g. memstore.MemStore.remember"
        )
    entity = index.get(selector)
    if entity is None:
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
    except PrimitiveError as exc:
        return fail(str(exc))
    data: dict[str, object] = {"entity": entity.record(), "body": None, "lines": None}
    data["truncated"] = False
    if body:
        text = read_text(index.root / entity.file)
        if text is None:
            return fail(f"cannot read {entity.file}: file is gone or no longer UTF-8 text")
        lines = text.splitlines()[entity.start - 1 : entity.end]
        shown = lines[:window]
        data["body"] = "\n".join(shown)
        data["lines"] = [entity.start, entity.start + len(shown) - 1]
        data["truncated"] = len(lines) > window
    return ok(data)
