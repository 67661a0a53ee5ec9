"""Building and normalizing URLs."""

from __future__ import annotations

import re
from urllib.parse import quote, urlsplit, urlunsplit

from httpkit.query import Params, encode_query

DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}

_PERCENT_ESCAPE = re.compile(r"%[0-9a-fA-F]{2}")
# Characters that may appear unescaped in a path segment (RFC 3986 pchar, minus "/").
_SEGMENT_SAFE = "-._~!$&'()*+,;=:@"


def build_url(
    base: str, *segments: str, query: Params | None = None, fragment: str | None = None
) -> str:
    """Append path ``segments`` to ``base`` and attach a query and fragment.

    Each segment is percent-encoded as a single path segment, so ``"a/b"`` stays
    one segment (``a%2Fb``). ``base`` keeps its own path; its query and fragment
    are replaced when ``query`` / ``fragment`` are given.
    """
    parts = urlsplit(base)
    path = join_path(parts.path, *segments) if segments else parts.path
    query_text = encode_query(query) if query is not None else parts.query
    fragment_text = quote(fragment, safe="") if fragment is not None else parts.fragment
    return urlunsplit((parts.scheme, parts.netloc, path, query_text, fragment_text))


def join_path(base_path: str, *segments: str) -> str:
    """Join ``segments`` onto ``base_path`` with exactly one ``/`` between parts."""
    path = base_path.rstrip("/")
    for segment in segments:
        path += "/" + quote(str(segment), safe=_SEGMENT_SAFE)
    return path or "/"


def normalize_url(url: str) -> str:
    """A canonical spelling of ``url`` for comparison and caching.

    Lowercases the scheme and host, drops the scheme's default port, resolves
    ``.`` and ``..`` path segments, uppercases percent-escapes and turns an empty
    path into ``/``. The query string and fragment are kept as they are.
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    netloc = _normalize_netloc(scheme, parts.hostname or "", parts.port, parts)
    path = remove_dot_segments(_upper_escapes(parts.path)) or "/"
    return urlunsplit((scheme, netloc, path, parts.query, parts.fragment))


def remove_dot_segments(path: str) -> str:
    """Resolve ``.`` and ``..`` segments as RFC 3986 section 5.2.4 does."""
    output: list[str] = []
    for segment in path.split("/"):
        if segment == "..":
            if len(output) > 1:
                output.pop()
        elif segment != ".":
            output.append(segment)
    if path.endswith(("/.", "/..")):
        output.append("")
    return "/".join(output)


def _normalize_netloc(scheme: str, host: str, port: int | None, parts) -> str:
    userinfo = parts.netloc.rpartition("@")[0] if "@" in parts.netloc else ""
    netloc = host.lower()
    if ":" in netloc:  # an IPv6 literal needs its brackets back
        netloc = f"[{netloc}]"
    if port is not None and DEFAULT_PORTS.get(scheme) != port:
        netloc += f":{port}"
    return f"{userinfo}@{netloc}" if userinfo else netloc


def _upper_escapes(text: str) -> str:
    return _PERCENT_ESCAPE.sub(lambda match: match.group(0).upper(), text)
