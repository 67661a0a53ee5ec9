"""httpkit: small, dependency-free HTTP helpers (no network access)."""

from httpkit.headers import (
    ContentDisposition,
    ContentType,
    Headers,
    SetCookie,
    parse_content_disposition,
    parse_content_type,
    parse_cookie_header,
    parse_set_cookie,
)
from httpkit.query import encode_query, parse_query
from httpkit.retry import RetryPolicy, parse_retry_after
from httpkit.urls import build_url, join_path, normalize_url

__all__ = [
    "ContentDisposition",
    "ContentType",
    "Headers",
    "RetryPolicy",
    "SetCookie",
    "build_url",
    "encode_query",
    "join_path",
    "normalize_url",
    "parse_content_disposition",
    "parse_content_type",
    "parse_cookie_header",
    "parse_query",
    "parse_retry_after",
    "parse_set_cookie",
]
__version__ = "1.2.0"
