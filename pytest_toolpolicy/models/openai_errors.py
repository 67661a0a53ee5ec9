"""What went wrong with an OpenAI-compatible call, as one line a report can show, and whose
fault it was (``blame_of``).

Every text from outside passes through ``scrub`` before it is clipped (a clipped key would no
longer match): the SDK's messages quote response bodies, and a misbehaving server may echo a
request, Authorization header included.
"""

from __future__ import annotations

import json
import re

import openai

from .base import Blame
from .http_bounds import BoundExceeded
from .usage import UsageError

REDACTED = "[REDACTED]"
_BEARER = re.compile(r"(?i)\bbearer\s+[^\s'\",}]+")
_DETAIL_CHARS = 300
# The 4xx an endpoint answers whatever the request said: a key or a proxy it refuses (401,
# 403, 407), a model or path the session named wrong (404), a timeout or conflict the SDK
# retries (408, 409), a rate limit (429). Any other 4xx is about the request itself.
_ENDPOINT_4XX = frozenset({401, 403, 404, 407, 408, 409, 429})


class MalformedResponse(ValueError):
    """A 2xx reply that is not a usable chat completion."""


def scrub(text: str, secret: str | None) -> str:
    """``text`` without ``secret`` and without any bearer token."""
    # A key shorter than this is a local server's placeholder, not a secret; removing it would
    # garble messages without protecting anything.
    if secret and len(secret) >= 8:
        text = text.replace(secret, REDACTED)
    return _BEARER.sub(f"Bearer {REDACTED}", text)


def describe_failure(
    exc: Exception, *, secret: str | None, max_retries: int, timeout: float, api_key_env: str
) -> str:
    """A specific reason for ``exc``, raised by the SDK or while reading its response."""
    if isinstance(exc, BoundExceeded):  # its message says which bound, where and when
        return _clip(str(exc), secret)
    retries = _retries_taken(exc, max_retries)
    after = f"after {retries} {'retry' if retries == 1 else 'retries'}"
    if isinstance(exc, openai.APITimeoutError):
        return f"timed out after {timeout:g}s per attempt, {after}"
    if isinstance(exc, openai.APIConnectionError):
        cause = _clip(_cause(exc), secret)
        if "refused" in cause.lower():
            return f"connection refused {after} ({cause})"
        return f"connection error {after}: {cause or _clip(exc.message, secret)}"
    if isinstance(exc, openai.APIResponseValidationError):
        return f"malformed response: {_detail(exc, secret)}"
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        if status == 429:
            return f"rate limited (429) {after}: {_detail(exc, secret)}"
        if status >= 500:
            return f"server error {status} {after}: {_detail(exc, secret)}"
        if status in (408, 409):  # retried by the SDK like a 5xx
            return f"request failed ({status}) {after}: {_detail(exc, secret)}"
        if status in (401, 403):
            return (
                f"not authorized ({status}); check the key in {api_key_env}: {_detail(exc, secret)}"
            )
        return f"request rejected ({status}): {_detail(exc, secret)}"
    if isinstance(exc, (MalformedResponse, UsageError)):
        return f"malformed response: {_clip(str(exc), secret)}"
    if isinstance(exc, json.JSONDecodeError):
        return f"malformed response: the body is not JSON ({exc.msg} at char {exc.pos})"
    return f"malformed response: {type(exc).__name__}: {_clip(str(exc), secret)}"


def blame_of(exc: Exception) -> Blame:
    """``"request"`` for an HTTP 4xx about the request itself (a parameter out of range, a
    prompt past the context: the caller's failure), else ``"endpoint"``."""
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        if 400 <= status < 500 and status not in _ENDPOINT_4XX:
            return "request"
    return "endpoint"


def _retries_taken(exc: Exception, max_retries: int) -> int:
    # The SDK numbers each attempt in this header; without it, a retryable failure that reached
    # us has used every retry.
    request = getattr(exc, "request", None)
    if request is None:
        return max_retries
    try:
        return int(request.headers["x-stainless-retry-count"])
    except (AttributeError, KeyError, TypeError, ValueError):
        return max_retries


def _detail(exc: openai.APIError, secret: str | None) -> str:
    body = exc.body
    message = exc.message
    if isinstance(body, str) and body.strip():
        message = body
    elif isinstance(body, dict):
        error = body.get("error", body)
        found = error.get("message") if isinstance(error, dict) else error
        if isinstance(found, str) and found:
            message = found
    return _clip(str(message), secret)


def _clip(text: str, secret: str | None) -> str:
    text = " ".join(scrub(text, secret).split())
    return text if len(text) <= _DETAIL_CHARS else text[:_DETAIL_CHARS] + "…"


def _cause(exc: BaseException) -> str:
    """The first non-empty message down the chain of what caused ``exc`` (e.g. "Connection refused")."""
    seen = exc.__cause__ or exc.__context__
    for _ in range(8):  # a chain can loop back on itself
        if seen is None:
            break
        if str(seen):
            return str(seen)
        seen = seen.__cause__ or seen.__context__
    return ""
