"""Bounds on one model call, enforced at the SDK's HTTP seam: a total deadline, a size cap and a
nesting bound.

The ``openai`` SDK runs on ``httpx2``, whose timeouts apply to each socket operation: an endpoint
that drips a byte a second never times out. Inside ``bounded_call`` every connect, write and read
of the SDK's sockets waits at most what is left of the call's deadline (through an ``httpcore2``
network backend that clamps each operation's timeout), and the SDK's retry sleep is refused when
the retry would start after it. The body of each response is counted as it arrives, before and
after any gzip/deflate decoding, and refused once past the cap, so no more than about the cap is
ever held. The SDK decodes the body with the response's own ``json()``: here that first measures
how deep the JSON nests and refuses more than ``jsonsafe.MAX_DEPTH`` levels, since ``json.loads``
recurses once per level (200,000 ``[`` are a ``RecursionError``) and so does the SDK's model
building after it.

All three refusals are ``openai.OpenAIError``s. The SDK re-raises those from its transport as they
are, without retrying, so a call past its deadline or its size cap ends at once; the depth
refusal comes from its parsing of a response it has stopped retrying, and ends the call too.
"""

from __future__ import annotations

import logging
import math
import sys
import time
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import httpcore2
import httpx2
import openai

from .. import jsonsafe, limits

log = logging.getLogger(__name__)

# What this client can decode within the cap; anything else is refused rather than handed to a
# decoder that could expand it without bound.
ACCEPT_ENCODING = "gzip, deflate"
_PIECE = 1 << 16
_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


class BoundExceeded(openai.OpenAIError):
    """A model call stopped by one of its bounds; the message says which and where."""


class DeadlineExceeded(BoundExceeded):
    pass


class ResponseTooLarge(BoundExceeded):
    pass


class ResponseTooDeep(BoundExceeded):
    pass


def check_depth(body: str | bytes) -> None:
    """``ResponseTooDeep`` if the JSON ``body`` nests deeper than ``jsonsafe.MAX_DEPTH``."""
    try:
        jsonsafe.check_depth(body)
    except jsonsafe.TooDeep as exc:
        raise ResponseTooDeep(f"model response is JSON {exc}") from None


@dataclass
class CallBounds:
    """The bounds of the call in progress (one per thread: it lives in a context variable)."""

    timeout_s: float
    response_bytes: int
    deadline: float  # time.monotonic()
    phase: str = "connecting"
    retries: int = 0  # retries the SDK has started so far
    body_bytes: int = 0  # of the response being read

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def clamp(self, timeout: float | None) -> tuple[float, bool]:
        """The timeout for the next socket operation, and whether the deadline is what binds it."""
        left = self.remaining()
        if left <= 0:
            raise self.exceeded()
        if timeout is not None and timeout < left:
            return timeout, False
        return left, True

    def exceeded(self, what: str | None = None) -> DeadlineExceeded:
        where = what or self.phase
        if what is None and self.phase == "reading the response body":
            where += f", {self.body_bytes} bytes received"
        tries = f"{self.retries} {'retry' if self.retries == 1 else 'retries'}"
        return DeadlineExceeded(
            f"model call exceeded its {self.timeout_s:g}s deadline ({where}, after {tries})"
        )


_ACTIVE: ContextVar[CallBounds | None] = ContextVar("toolpolicy_call_bounds", default=None)


@contextmanager
def bounded_call(timeout_s: float, response_bytes: int | None = None) -> Iterator[CallBounds]:
    """Bound the model call made inside: ``timeout_s`` in all, each response ``response_bytes``
    (default: the ``response_mb`` limit in force)."""
    if response_bytes is None:
        response_bytes = limits.current().response_bytes
    bounds = CallBounds(timeout_s, response_bytes, time.monotonic() + timeout_s)
    token = _ACTIVE.set(bounds)
    try:
        yield bounds
    finally:
        _ACTIVE.reset(token)


def _too_large(cap: int) -> ResponseTooLarge:
    return ResponseTooLarge(
        f"model response exceeded {cap / (1 << 20):.3g} MiB (limit response_mb)"
    )


class _DeadlineStream(httpcore2.NetworkStream):
    def __init__(self, inner: httpcore2.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return _bounded(lambda t: self._inner.read(max_bytes, t), timeout)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        _bounded(lambda t: self._inner.write(buffer, t), timeout)

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore2.NetworkStream:
        return _DeadlineStream(
            _bounded(lambda t: self._inner.start_tls(ssl_context, server_hostname, t), timeout)
        )

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore2.NetworkBackend):
    def __init__(self, inner: httpcore2.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        return _DeadlineStream(
            _bounded(
                lambda t: self._inner.connect_tcp(host, port, t, local_address, socket_options),
                timeout,
            )
        )

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore2.NetworkStream:
        return _DeadlineStream(
            _bounded(lambda t: self._inner.connect_unix_socket(path, t, socket_options), timeout)
        )

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def _bounded(operation: Any, timeout: float | None) -> Any:
    """``operation(timeout)`` waiting no longer than the active deadline allows."""
    bounds = _ACTIVE.get()
    if bounds is None:
        return operation(timeout)
    clamped, by_deadline = bounds.clamp(timeout)
    try:
        return operation(clamped)
    except httpcore2.TimeoutException:
        if by_deadline:
            raise bounds.exceeded() from None
        raise


class BoundedTransport(httpx2.HTTPTransport):
    """``httpx2``'s transport with every socket operation under the deadline and each response
    body under the size cap."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # httpx2 builds its pool without a way to pass a network backend; the pool (a plain
        # pool or a proxy) hands this attribute to every connection it makes.
        pool = self._pool
        if not isinstance(getattr(pool, "_network_backend", None), httpcore2.NetworkBackend):
            raise RuntimeError(f"httpx2's pool {type(pool).__name__} has no network backend")
        pool._network_backend = _DeadlineBackend(pool._network_backend)

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        bounds = _ACTIVE.get()
        if bounds is not None:
            bounds.phase = "waiting for the response"
            bounds.body_bytes = 0
            bounds.retries = _int(request.headers.get("x-stainless-retry-count"))
            # The pool wait is no socket operation; bound it here.
            timeouts = dict(request.extensions.get("timeout") or {})
            if "pool" in timeouts:
                timeouts["pool"] = bounds.clamp(timeouts["pool"])[0]
                request.extensions["timeout"] = timeouts
        request.headers["Accept-Encoding"] = ACCEPT_ENCODING
        response = super().handle_request(request)
        cap = bounds.response_bytes if bounds is not None else limits.current().response_bytes
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if _int(response.headers.get("content-length")) > cap:
            response.close()
            raise _too_large(cap)
        if encoding not in ("", "identity", *_WBITS):
            response.close()
            raise BoundExceeded(f"model response has content-encoding {encoding!r}, not asked for")
        decode = encoding in _WBITS
        # Decoded here, under the cap: httpx2 must not decode it again.
        headers = [
            (name, value)
            for name, value in response.headers.raw
            if not decode or name.lower() not in (b"content-encoding", b"content-length")
        ]
        stream = response.stream
        assert isinstance(stream, httpx2.SyncByteStream)
        return _DepthBoundResponse(
            status_code=response.status_code,
            headers=headers,
            stream=_CappedStream(stream, cap, bounds, _WBITS.get(encoding)),
            extensions=response.extensions,
        )


class _DepthBoundResponse(httpx2.Response):
    """A response whose ``json()`` (the SDK's only way to decode a body it parses) refuses JSON
    nested deeper than ``jsonsafe.MAX_DEPTH``. The client hands this very object to the SDK."""

    def json(self, **kwargs: Any) -> Any:
        check_depth(self.content)
        return super().json(**kwargs)


class _CappedStream(httpx2.SyncByteStream):
    def __init__(
        self, inner: httpx2.SyncByteStream, cap: int, bounds: CallBounds | None, wbits: int | None
    ) -> None:
        self._inner = inner
        self._cap = cap
        self._bounds = bounds
        self._decoder = None if wbits is None else zlib.decompressobj(wbits)

    def __iter__(self) -> Iterator[bytes]:
        if self._bounds is not None:
            self._bounds.phase = "reading the response body"
        wire = decoded = 0
        for chunk in self._inner:
            wire += len(chunk)
            if self._bounds is not None:
                self._bounds.body_bytes = wire
            if wire > self._cap:
                raise _too_large(self._cap)
            if self._decoder is None:
                yield chunk
                continue
            while chunk:
                # Decoded in small pieces, never past one byte over the cap: a small compressed
                # bomb is refused without being expanded.
                out = self._decode(chunk, min(self._cap - decoded + 1, _PIECE))
                decoded += len(out)
                if decoded > self._cap:
                    raise _too_large(self._cap)
                yield out
                chunk = self._decoder.unconsumed_tail
        if self._decoder is not None:
            tail = self._decoder.flush()
            if decoded + len(tail) > self._cap:
                raise _too_large(self._cap)
            yield tail

    def _decode(self, chunk: bytes, limit: int) -> bytes:
        assert self._decoder is not None
        try:
            return self._decoder.decompress(chunk, limit)
        except zlib.error as exc:
            raise httpx2.DecodingError(f"model response: bad compressed body ({exc})") from None

    def close(self) -> None:
        self._inner.close()


class BoundedHTTPClient(openai.DefaultHttpxClient):
    """The SDK's default HTTP client (its timeouts, pool limits, redirects, proxies from the
    environment) with ``BoundedTransport`` under every route, the proxied ones included."""

    # httpx2's private transport hooks: overridden to pass their keyword arguments on as they
    # come (whatever this httpx2 version names), so the signatures differ on purpose.
    def _init_transport(  # type: ignore[override]
        self, transport: httpx2.BaseTransport | None = None, **kwargs: Any
    ) -> httpx2.BaseTransport:
        return transport if transport is not None else BoundedTransport(**kwargs)

    def _init_proxy_transport(  # type: ignore[override]
        self, proxy: httpx2.Proxy, **kwargs: Any
    ) -> httpx2.BaseTransport:
        return BoundedTransport(proxy=proxy, **kwargs)

    def __del__(self) -> None:
        # As the SDK's own client does: a client dropped for a new key closes its connections.
        try:
            if not self.is_closed:
                self.close()
        except Exception:
            pass


class BoundedOpenAI(openai.OpenAI):
    """The SDK's client, whose retries wait as the SDK says unless the wait would cross the
    deadline of the call in progress: then the call ends now, not after a sleep that cannot
    help."""

    def _sleep_for_retry(
        self, *, retries_taken: int, max_retries: int, options: Any, response: Any
    ) -> None:
        bounds = _ACTIVE.get()
        if bounds is None:
            super()._sleep_for_retry(
                retries_taken=retries_taken,
                max_retries=max_retries,
                options=options,
                response=response,
            )
            return
        headers = response.headers if response is not None else None
        delay = self._calculate_retry_timeout(max_retries - retries_taken, options, headers)
        if not math.isfinite(delay) or delay >= bounds.remaining():
            last = f"HTTP {response.status_code}" if response is not None else _in_flight()
            bounds.retries = retries_taken
            raise bounds.exceeded(f"retry {retries_taken + 1} would start after it; last: {last}")
        log.debug("retrying in %.2fs (retry %d of %d)", delay, retries_taken + 1, max_retries)
        time.sleep(delay)


def _in_flight() -> str:
    # Called from the SDK's except block: the failure that made it retry.
    exc = sys.exc_info()[1]
    return "a failure" if exc is None else type(exc).__name__


def _int(value: str | None) -> int:
    try:
        return int(value or 0)
    except ValueError:
        return 0
