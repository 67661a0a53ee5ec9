"""HTTP header handling: a case-insensitive multidict and parsers for common headers."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field

_QUOTED_PAIR = re.compile(r"\\(.)")


class Headers(MutableMapping[str, str]):
    """HTTP headers: names compare case-insensitively, a name may repeat.

    Order and the original spelling of names are kept. Item access returns the
    first value of a name; :meth:`get_all` returns every value and :meth:`add`
    appends one (needed for ``Set-Cookie``, which must not be folded).
    """

    def __init__(self, items: Mapping[str, str] | Iterable[tuple[str, str]] | None = None):
        self._items: list[tuple[str, str]] = []
        pairs = items.items() if isinstance(items, Mapping) else (items or ())
        for name, value in pairs:
            self.add(name, value)

    def add(self, name: str, value: str) -> None:
        """Append a value for ``name``, keeping any existing ones."""
        self._items.append((name, str(value)))

    def get_all(self, name: str) -> list[str]:
        """Every value sent for ``name``, in order (empty if there is none)."""
        key = _fold(name)
        return [value for item_name, value in self._items if _fold(item_name) == key]

    def __getitem__(self, name: str) -> str:
        key = _fold(name)
        for item_name, value in self._items:
            if _fold(item_name) == key:
                return value
        raise KeyError(name)

    def __setitem__(self, name: str, value: str) -> None:
        """Replace every value of ``name`` with ``value``."""
        key = _fold(name)
        self._items = [item for item in self._items if _fold(item[0]) != key]
        self._items.append((name, str(value)))

    def __delitem__(self, name: str) -> None:
        key = _fold(name)
        kept = [item for item in self._items if _fold(item[0]) != key]
        if len(kept) == len(self._items):
            raise KeyError(name)
        self._items = kept

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        key = _fold(name)
        return any(_fold(item_name) == key for item_name, _ in self._items)

    def __iter__(self) -> Iterator[str]:
        seen: set[str] = set()
        for name, _ in self._items:
            if _fold(name) not in seen:
                seen.add(_fold(name))
                yield name

    def __len__(self) -> int:
        return len({_fold(name) for name, _ in self._items})

    def __repr__(self) -> str:
        return f"Headers({self._items!r})"

    def raw_items(self) -> list[tuple[str, str]]:
        """Every ``(name, value)`` pair as added, repeats included."""
        return list(self._items)


def _fold(name: str) -> str:
    return name.strip().lower()


@dataclass(frozen=True)
class ContentType:
    """A parsed ``Content-Type``: the media type and its parameters."""

    mime_type: str
    params: dict[str, str] = field(default_factory=dict)

    @property
    def charset(self) -> str | None:
        return self.params.get("charset")

    @property
    def boundary(self) -> str | None:
        """The multipart boundary, if any."""
        return self.params.get("boundary")

    @property
    def is_json(self) -> bool:
        return self.mime_type == "application/json" or self.mime_type.endswith("+json")


@dataclass(frozen=True)
class ContentDisposition:
    """A parsed ``Content-Disposition``: ``inline`` / ``attachment`` and parameters."""

    kind: str
    params: dict[str, str] = field(default_factory=dict)

    @property
    def filename(self) -> str | None:
        return self.params.get("filename")


def parse_content_type(value: str) -> ContentType:
    """Parse ``text/html; charset=UTF-8`` into ``ContentType('text/html', {...})``.

    The media type and parameter names are lowercased; parameter values keep their
    case and lose their quotes.
    """
    mime_type, params = _parse_parameterized(value)
    return ContentType(mime_type, params)


def parse_content_disposition(value: str) -> ContentDisposition:
    """Parse ``attachment; filename="report.pdf"`` into a :class:`ContentDisposition`."""
    kind, params = _parse_parameterized(value)
    return ContentDisposition(kind, params)


def _parse_parameterized(value: str) -> tuple[str, dict[str, str]]:
    head, *parts = split_header_params(value) or [""]
    params: dict[str, str] = {}
    for part in parts:
        name, _, raw = part.partition("=")
        name = name.strip().lower()
        if name:
            params[name] = _unquote(raw.strip())
    return head.strip().lower(), params


def split_header_params(value: str) -> list[str]:
    """Split a header value on ``;``, leaving quoted strings intact.

    ``'a; b="x;y"'`` -> ``['a', 'b="x;y"']``. Empty pieces are dropped.
    """
    parts, current, in_quotes, escaped = [], [], False, False
    for char in value:
        if escaped:
            escaped = False
        elif char == "\\" and in_quotes:
            escaped = True
        elif char == '"':
            in_quotes = not in_quotes
        elif char == ";" and not in_quotes:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return [part.strip() for part in parts if part.strip()]


def _unquote(value: str) -> str:
    """Strip the quotes of an HTTP quoted-string and undo its backslash escapes."""
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return _QUOTED_PAIR.sub(r"\1", value[1:-1])
    return value


def parse_cookie_header(value: str) -> dict[str, str]:
    """Parse a request ``Cookie`` header into ``{name: value}``.

    When a name repeats, the first value wins (browsers send the most specific
    cookie first).
    """
    cookies: dict[str, str] = {}
    for part in value.split(";"):
        name, sep, raw = part.strip().partition("=")
        if sep and name:
            cookies.setdefault(name, _unquote(raw.strip()))
    return cookies


@dataclass(frozen=True)
class SetCookie:
    """A parsed ``Set-Cookie`` response header."""

    name: str
    value: str
    attributes: dict[str, str] = field(default_factory=dict)

    @property
    def path(self) -> str | None:
        return self.attributes.get("path")

    @property
    def domain(self) -> str | None:
        domain = self.attributes.get("domain")
        return domain.lstrip(".").lower() if domain else None

    @property
    def max_age(self) -> int | None:
        raw = self.attributes.get("max-age", "")
        return int(raw) if raw.lstrip("-").isdigit() else None

    @property
    def secure(self) -> bool:
        return "secure" in self.attributes

    @property
    def http_only(self) -> bool:
        return "httponly" in self.attributes


def parse_set_cookie(value: str) -> SetCookie:
    """Parse one ``Set-Cookie`` header value.

    Attribute names are lowercased; flag attributes (``Secure``, ``HttpOnly``) map to
    ``""``. Raises :class:`ValueError` when the name-value pair is missing.
    """
    pair, *attribute_parts = value.split(";")
    name, sep, raw = pair.partition("=")
    if not sep or not name.strip():
        raise ValueError(f"Set-Cookie without a name=value pair: {value!r}")
    attributes = {}
    for part in attribute_parts:
        key, _, attribute_value = part.strip().partition("=")
        if key:
            attributes[key.strip().lower()] = attribute_value.strip()
    return SetCookie(name.strip(), _unquote(raw.strip()), attributes)
