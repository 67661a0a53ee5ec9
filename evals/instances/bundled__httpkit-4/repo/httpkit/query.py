"""Query-string encoding and decoding (``application/x-www-form-urlencoded``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from urllib.parse import quote_plus, unquote_plus

Scalar = str | int | float | bool | None
Params = Mapping[str, Scalar | Iterable[Scalar]] | Iterable[tuple[str, Scalar]]


def encode_query(params: Params, *, sort: bool = False) -> str:
    """Encode ``params`` as a query string (without the leading ``?``).

    ``params`` is a mapping or an iterable of ``(name, value)`` pairs. A list or tuple
    value repeats the name once per item; ``None`` values are left out; booleans
    become ``true`` / ``false``. With ``sort=True`` the pairs are ordered by name,
    which gives a canonical form for caching or signing.
    """
    pairs = list(_pairs(params))
    if sort:
        pairs.sort(key=lambda pair: pair[0])
    return "&".join(f"{quote_plus(name)}={quote_plus(value)}" for name, value in pairs)


def parse_query(query: str, *, keep_blank: bool = True) -> dict[str, list[str]]:
    """Decode a query string into ``{name: [values...]}``, preserving order.

    A leading ``?`` is ignored. A name without ``=`` has the value ``""``; blank
    values are dropped when ``keep_blank`` is false.
    """
    result: dict[str, list[str]] = {}
    for chunk in query.lstrip("?").split("&"):
        if not chunk:
            continue
        raw_name, _, raw_value = chunk.partition("=")
        value = unquote_plus(raw_value)
        if value or keep_blank:
            result.setdefault(unquote_plus(raw_name), []).append(value)
    return result


def _pairs(params: Params) -> Iterable[tuple[str, str]]:
    items = params.items() if isinstance(params, Mapping) else params
    for name, value in items:
        values = value if isinstance(value, (list, tuple)) else [value]
        for item in values:
            if item is not None:
                yield str(name), _format_value(item)


def _format_value(value: Scalar) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
