"""An HTTP/1.x request head, read whole or refused with the reason: bytes in, a ``Head`` out.

The bridge's server (``http_server.py``) gathers a request's head incrementally; once the blank
line that ends it has arrived (``head_end``), ``parse_head`` reads it. What cannot be read as
HTTP — a bad request line, a version other than 1.0 or 1.1, a header line without a name and a
colon, a folded line, more than ``HEADERS_MAX`` headers — is a ``HeadError`` whose message is the
400's reason. A body whose length the head does not tell (a Content-Length that is no size, one
given twice, a Transfer-Encoding) is no ``HeadError``: the request can still be answered, by its
route, and the head says why its size is unknown (``size_problem``); the line is closed after
the answer, as where its body ends is unknown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .chat_request import shown

HEAD_BYTES = 64 << 10  # a request line and headers past this are refused (http.server's cap)
HEADERS_MAX = 100  # http.server's
SIZE_DIGITS = 30  # a Content-Length of more digits is no size (one of 30 is refused 413 anyway)
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_VERSION = re.compile(r"HTTP/1\.[01]")


class HeadError(ValueError):
    """The head is not HTTP the bridge reads; the message says why."""


@dataclass(frozen=True)
class Head:
    method: str
    target: str
    version: str  # "HTTP/1.0" or "HTTP/1.1"
    headers: tuple[tuple[str, str], ...]  # (name lowercased, value), in order
    size: int | None  # the body's Content-Length; None: not given, or not usable (size_problem)
    size_problem: str | None = None
    keep_alive: bool = True  # the client keeps the line open after the answer
    expect_continue: bool = False  # it waits for "100 Continue" before sending the body

    def get(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k == name), None)


def head_end(buffer: bytes | bytearray, start: int = 0) -> int | None:
    """The index just past the blank line that ends the head in ``buffer`` (CRLF or bare LF
    line ends), or None while it has not arrived; ``start`` skips what was already searched."""
    ends = [(i, len(mark)) for mark in (b"\n\r\n", b"\n\n") if (i := buffer.find(mark, start)) >= 0]
    if not ends:
        return None
    at, length = min(ends)
    return at + length


def parse_head(data: bytes) -> Head:
    """The head ``data`` holds (its request line and headers, the blank line included)."""
    lines = [line.removesuffix(b"\r") for line in data.split(b"\n")]
    while lines and not lines[-1]:
        lines.pop()
    if not lines:
        raise HeadError("no request line")
    method, target, version = _request_line(lines[0])
    if len(lines) - 1 > HEADERS_MAX:
        raise HeadError(f"more than {HEADERS_MAX} header lines")
    headers = tuple(_header(line) for line in lines[1:])
    tokens = {
        token.strip().lower() for name, value in headers if name == "connection"
        for token in value.split(",")
    }  # fmt: skip
    expect = {value.lower() for name, value in headers if name == "expect"}
    size, problem = _size(headers)
    return Head(
        method=method,
        target=target,
        version=version,
        headers=headers,
        size=size,
        size_problem=problem,
        keep_alive="close" not in tokens if version == "HTTP/1.1" else "keep-alive" in tokens,
        expect_continue=version == "HTTP/1.1" and "100-continue" in expect,
    )


def _request_line(line: bytes) -> tuple[str, str, str]:
    text = line.decode("latin-1")
    parts = text.split(" ")
    if len(parts) != 3 or not _TOKEN.fullmatch(parts[0]) or not _target(parts[1]):
        raise HeadError(f"bad request line: {shown(text)}")
    if not _VERSION.fullmatch(parts[2]):
        raise HeadError(f"unsupported HTTP version: {shown(parts[2])} (HTTP/1.0 or 1.1)")
    return parts[0], parts[1], parts[2]


def _target(text: str) -> bool:
    return bool(text) and all(" " < c < "\x7f" for c in text)


def _header(line: bytes) -> tuple[str, str]:
    text = line.decode("latin-1")
    if text[:1] in (" ", "\t"):
        raise HeadError(f"folded header line: {shown(text)}")
    name, colon, value = text.partition(":")
    if not colon or not _TOKEN.fullmatch(name):
        raise HeadError(f"bad header line: {shown(text)}")
    return name.lower(), value.strip(" \t")


def _size(headers: tuple[tuple[str, str], ...]) -> tuple[int | None, str | None]:
    if any(name == "transfer-encoding" for name, _ in headers):
        return None, "Transfer-Encoding is not taken: send a Content-Length"
    sizes = [value for name, value in headers if name == "content-length"]
    if not sizes:
        return None, None
    if len(sizes) > 1:
        return None, f"Content-Length given {len(sizes)} times"
    value = sizes[0]
    if not (value.isascii() and value.isdigit() and len(value) <= SIZE_DIGITS):
        return None, f"Content-Length {shown(value)} is not a size"
    return int(value), None
