"""A request head read whole, or refused with the reason (``agents/http_head.py``)."""

from __future__ import annotations

import pytest

from pytest_toolpolicy.agents.http_head import HEADERS_MAX, HeadError, head_end, parse_head


def test_a_head_ends_at_its_blank_line_with_crlf_or_bare_lf() -> None:
    assert head_end(b"GET / HTTP/1.1\r\nHost: x\r\n\r\nbody") == 27
    assert head_end(b"GET / HTTP/1.1\nHost: x\n\nbody") == 24
    assert head_end(b"GET / HTTP/1.1\r\nHost: x\r\n") is None
    assert head_end(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", start=20) == 27


def test_a_post_head_gives_its_size_and_the_lines_fate() -> None:
    head = parse_head(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 12\r\n"
                      b"Expect: 100-continue\r\n\r\n")  # fmt: skip
    assert (head.method, head.target, head.version) == ("POST", "/v1/chat/completions", "HTTP/1.1")
    assert (head.size, head.size_problem, head.keep_alive, head.expect_continue) == (
        12,
        None,
        True,
        True,
    )
    assert head.get("host") == "x" and head.get("expect") == "100-continue"
    assert not parse_head(b"GET / HTTP/1.1\r\nConnection: Close\r\n\r\n").keep_alive
    assert not parse_head(b"GET / HTTP/1.0\r\n\r\n").keep_alive
    assert parse_head(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").keep_alive


@pytest.mark.parametrize(
    ("headers", "problem"),
    [
        (b"Content-Length: 5\r\nContent-Length: 5\r\n", "Content-Length given 2 times"),
        (b"Content-Length: 5, 5\r\n", "Content-Length '5, 5' is not a size"),
        (b"Content-Length: -1\r\n", "Content-Length '-1' is not a size"),
        (b"Content-Length: \xb2\r\n", "Content-Length '\xb2' is not a size"),  # '²'.isdigit()
        (b"Content-Length: " + b"9" * 31 + b"\r\n", "is not a size"),
        (b"Transfer-Encoding: chunked\r\n", "Transfer-Encoding is not taken"),
        (b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", "Transfer-Encoding is not taken"),
    ],
)
def test_a_body_of_unknown_length_is_said_so_not_guessed(headers: bytes, problem: str) -> None:
    head = parse_head(b"POST /v1/chat/completions HTTP/1.1\r\n" + headers + b"\r\n")
    assert head.size is None and head.size_problem is not None and problem in head.size_problem


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"GARBAGE\r\n\r\n", "bad request line: 'GARBAGE'"),
        (b"GET  / HTTP/1.1\r\n\r\n", "bad request line"),
        (b"GET /a b HTTP/1.1\r\n\r\n", "bad request line"),
        (b"G(T / HTTP/1.1\r\n\r\n", "bad request line"),
        (b"GET / HTTP/2.0\r\n\r\n", "unsupported HTTP version: 'HTTP/2.0'"),
        (b"GET / HTTP/1.1\r\nno colon here\r\n\r\n", "bad header line: 'no colon here'"),
        (b"GET / HTTP/1.1\r\nHost : x\r\n\r\n", "bad header line: 'Host : x'"),
        (b"GET / HTTP/1.1\r\nHost: x\r\n  folded\r\n\r\n", "folded header line"),
        (b"GET / HTTP/1.1\r\n" + b"X: y\r\n" * (HEADERS_MAX + 1) + b"\r\n", "more than 100 header"),
    ],
)
def test_what_is_not_http_is_refused_with_the_reason(data: bytes, reason: str) -> None:
    with pytest.raises(HeadError) as refused:
        parse_head(data)
    assert str(refused.value).startswith(reason)
