"""The bridge's HTTP/1.1 server: one selectors loop for every connection, one thread answering.

A thread per connection let a sandboxed agent that held idle connections make the harness run
thousands of threads. Here a server runs two threads (``THREADS``) whatever its connections:
this loop, which accepts, reads each request incrementally, enforces the bounds and timeouts
below and writes the replies; and the answering thread, the one place a whole request is
answered (``Service``: the bridge answers one call at a time anyway), so a slow model call holds
up no other connection's reading, timing or refusal. Nothing a connection does ends the loop:
an error is one line in the log and that connection closed.

Bounds (``ServerLimits``, the bridge's from ``BridgeLimits``): at most ``connections`` open at
once — past it the one idle longest (no request begun, nothing waiting) is closed to make room,
as a keep-alive server does, and when none is idle the newcomer is answered 503 naming the bound
and closed. A connection with no request begun is closed after ``idle_s``. A request must
arrive whole, head and body, within ``request_s`` of its first byte (else 408), and its reply
be taken within as long again. A head past ``HEAD_BYTES``, or one that is not HTTP, is 400 with
the reason. A body up to ``body_bytes`` is read and handed on; a larger one up to
``drain_bytes`` is read and dropped, so a client still sending it hears the answer on a line
kept open; past that it is not read, and the line is closed after the answer. A line is closed
gracefully: its write side shut first, then what still arrives dropped for at most ``LINGER_S``
and ``LINGER_BYTES``, so a TCP client still sending is not reset before it reads the answer.
"""

from __future__ import annotations

import contextlib
import errno
import http
import json
import logging
import queue
import selectors
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from .http_head import HEAD_BYTES, Head, HeadError, head_end, parse_head
from .openai_wire import INVALID, error_body, one_line

log = logging.getLogger(__name__)

THREADS = 2  # a server's, whatever its connections: the loop and the answering thread
BACKLOG = 128  # connections the kernel holds before the loop accepts them
PIECE = 1 << 16  # read at a time
LINGER_S = 2.0  # a closing line's incoming bytes are dropped this long at most...
LINGER_BYTES = 1 << 20  # ...and this many, then it is closed outright
ACCEPT_PAUSE_S = 0.1  # accepting rests this long when the process is out of descriptors
_OUT_OF_DESCRIPTORS = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)
_CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
State = Literal["idle", "head", "body", "drain", "busy", "send", "linger"]


@dataclass(frozen=True)
class ServerLimits:
    """The bounds of the module docstring; the bridge's come from ``BridgeLimits``."""

    connections: int = 32  # open at once (those closing are capped alike, apart)
    idle_s: float = 30.0  # with no request begun
    request_s: float = 30.0  # from a request's first byte to its last; for a reply to be taken
    body_bytes: int = 4 << 20  # a body kept; at most connections * body_bytes held at once
    drain_bytes: int = 32 << 20  # a body dropped as it arrives; past it, not read


@dataclass(frozen=True)
class Request:
    head: Head
    body: bytes | None  # None: not kept (past body_bytes: dropped, or never read)


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes
    content_type: str = "application/json"
    close: bool = False  # close the line after it


Service = Callable[[Request], Response]


def json_response(status: int, body: object, *, close: bool = False) -> Response:
    return Response(status, json.dumps(body).encode(), close=close)


def render(response: Response, close: bool) -> bytes:
    reason = http.HTTPStatus(response.status).phrase
    lines = [f"HTTP/1.1 {response.status} {reason}", f"Content-Type: {response.content_type}",
             f"Content-Length: {len(response.body)}"]  # fmt: skip
    if close:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + response.body


@dataclass(eq=False)
class _Conn:
    sock: socket.socket
    deadline: float
    state: State = "idle"
    since: float = 0.0  # idle since: who is closed first to make room
    buf: bytearray = field(default_factory=bytearray)
    searched: int = 0  # of buf, for the head's end
    head: Head | None = None
    need: int = 0  # body bytes still to come
    body: bytearray = field(default_factory=bytearray)
    out: memoryview = memoryview(b"")
    close_after: bool = False
    events: int = 0  # as registered with the selector
    dropped: int = 0  # while lingering


class LoopServer:
    """Serves ``listener`` (bound and listening) with ``service`` until ``close``."""

    def __init__(self, listener: socket.socket, service: Service, limits: ServerLimits) -> None:
        self.limits = limits
        self._listener = listener
        self._service = service
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._jobs: queue.SimpleQueue[tuple[_Conn, Request] | None] = queue.SimpleQueue()
        self._done: deque[tuple[_Conn, Response]] = deque()
        self._open: set[_Conn] = set()  # counted toward the bound
        self._closing: set[_Conn] = set()  # refused or lingering, capped alike
        self._stopping = False
        self._next = 0.0  # the earliest deadline (or accept resumption) the loop must see
        self._paused_until: float | None = None
        for sock in (listener, self._wake_r, self._wake_w):
            sock.setblocking(False)
        self._selector.register(listener, selectors.EVENT_READ, "listener")
        self._selector.register(self._wake_r, selectors.EVENT_READ, "wake")
        self._threads = [threading.Thread(target=self._loop, daemon=True, name="bridge-loop"),
                         threading.Thread(target=self._answer, daemon=True, name="bridge-answer")]  # fmt: skip

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def close(self) -> None:
        """Stop the loop and close every line; a call being answered is not waited for."""
        self._stopping = True
        self._wake()
        self._threads[0].join(timeout=10)

    # -- the loop -------------------------------------------------------------------------

    def _loop(self) -> None:
        try:
            while not self._stopping:
                try:
                    self._step()
                except Exception as exc:  # noqa: BLE001 -- the loop outlives any fault of its own
                    log.error("bridge server: %s", one_line(f"{type(exc).__name__}: {exc}"))
                    time.sleep(0.01)
        finally:
            self._shut()

    def _step(self) -> None:
        timeout = min(max(self._next - time.monotonic(), 0.0), 1.0)
        for key, mask in self._selector.select(timeout):
            if key.data == "listener":
                self._accept()
            elif key.data == "wake":
                with contextlib.suppress(OSError):
                    while self._wake_r.recv(4096):
                        pass
            else:
                self._guarded(key.data, mask)
        while self._done:
            conn, response = self._done.popleft()
            if conn in self._open:
                self._send(conn, response)
        if time.monotonic() >= self._next:
            self._sweep()

    def _guarded(self, conn: _Conn, mask: int) -> None:
        try:
            if mask & selectors.EVENT_WRITE and conn.state == "send":
                self._flush(conn)
            if mask & selectors.EVENT_READ and conn.state not in ("send", "busy"):
                self._read(conn)  # (a line being answered is read again once it is)
        except OSError:  # the line failed: the peer hung up or reset it
            self._drop(conn)
        except Exception as exc:  # noqa: BLE001 -- one connection's fault closes that one
            log.error("bridge server: %s", one_line(f"{type(exc).__name__}: {exc}"))
            self._drop(conn)

    def _accept(self) -> None:
        while True:
            try:
                sock, _ = self._listener.accept()
            except BlockingIOError:
                return
            except OSError as exc:
                if exc.errno in _OUT_OF_DESCRIPTORS:  # rest, rather than spin on the backlog
                    self._selector.unregister(self._listener)
                    self._paused_until = self._due(ACCEPT_PAUSE_S)
                return
            sock.setblocking(False)
            if sock.family == socket.AF_INET:  # "100 Continue", then the reply: two writes
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            now = time.monotonic()
            conn = _Conn(sock, deadline=self._due(self.limits.idle_s), since=now)
            if len(self._open) < self.limits.connections or self._evict():
                self._open.add(conn)
                self._want(conn, selectors.EVENT_READ)
            elif len(self._closing) < self.limits.connections:
                self._closing.add(conn)
                why = (f"too many connections: the bridge holds at most {self.limits.connections}"
                       " at once; retry when one of yours has closed")  # fmt: skip
                self._send(conn, json_response(503, error_body(why, "server_busy"), close=True))
            else:
                sock.close()

    def _evict(self) -> bool:
        """Close the connection idle longest to make room; False when none is idle."""
        idle = sorted((c for c in self._open if c.state == "idle" and not c.buf),
                      key=lambda c: c.since)  # fmt: skip
        for conn in idle:
            try:
                waiting = conn.sock.recv(1, socket.MSG_PEEK)
            except OSError:  # nothing waiting (BlockingIOError), or the line is gone
                waiting = b""
            if not waiting:  # nothing sent (or the peer gone): closing loses nothing
                self._drop(conn)
                return True
        return False

    # -- reading a request ----------------------------------------------------------------

    def _read(self, conn: _Conn) -> None:
        try:
            data = conn.sock.recv(PIECE)
        except BlockingIOError:
            return
        if conn.state == "linger":
            conn.dropped += len(data)
            if not data or conn.dropped > LINGER_BYTES:
                self._drop(conn)
            return
        if not data:  # the peer is done sending: between requests or mid-way, the line ends
            self._drop(conn)
            return
        conn.buf += data
        self._advance(conn)

    def _advance(self, conn: _Conn) -> None:
        """Move ``conn`` on as far as its buffered bytes take it."""
        limits = self.limits
        if conn.state == "idle":
            blank = len(conn.buf) - len(conn.buf.lstrip(b"\r\n"))
            del conn.buf[:blank]  # empty lines before a request line are ignored (RFC 9112)
            if not conn.buf:
                return
            conn.state, conn.searched = "head", 0
            conn.deadline = self._due(limits.request_s)
        if conn.state == "head":
            end = head_end(conn.buf, max(conn.searched - 2, 0))
            if (len(conn.buf) if end is None else end) > HEAD_BYTES:
                self._refuse(conn, 400, f"the request's head passes {HEAD_BYTES} bytes")
                return
            if end is None:
                conn.searched = len(conn.buf)
                return
            try:
                head = parse_head(bytes(conn.buf[:end]))
            except HeadError as exc:
                self._refuse(conn, 400, str(exc))
                return
            del conn.buf[:end]
            conn.head, conn.need = head, head.size or 0
            conn.close_after = not head.keep_alive or head.size_problem is not None
            if conn.need > limits.drain_bytes:  # not read at all: answered, and the line closed
                conn.close_after = True
                self._dispatch(conn, Request(head, None))
                return
            conn.state = "body" if conn.need <= limits.body_bytes else "drain"
            if head.expect_continue and conn.need > len(conn.buf):
                with contextlib.suppress(BlockingIOError):  # a few bytes: sent whole, or not
                    conn.sock.send(_CONTINUE)
        if conn.state in ("body", "drain"):
            take = min(conn.need, len(conn.buf))
            if conn.state == "body":
                conn.body += conn.buf[:take]
            del conn.buf[:take]
            conn.need -= take
            if conn.need == 0 and conn.head is not None:
                body = bytes(conn.body) if conn.state == "body" else None
                conn.body = bytearray()
                self._dispatch(conn, Request(conn.head, body))

    def _dispatch(self, conn: _Conn, request: Request) -> None:
        conn.state = "busy"  # neither read nor timed while it is answered
        self._want(conn, 0)
        self._jobs.put((conn, request))

    # -- answering ------------------------------------------------------------------------

    def _answer(self) -> None:
        """The answering thread: each whole request, in turn, to the service."""
        while (job := self._jobs.get()) is not None:
            conn, request = job
            try:
                response = self._service(request)
            except Exception as exc:  # noqa: BLE001 -- the service's own last resort failed
                why = one_line(f"server fault: {type(exc).__name__}: {exc}")
                log.error("bridge server: %s", why)
                response = json_response(500, error_body(why, "server_error"), close=True)
            self._done.append((conn, response))
            self._wake()

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # full: a wake is pending anyway; closed: stopping
            self._wake_w.send(b"\0")

    def _refuse(self, conn: _Conn, status: int, why: str) -> None:
        """The server's own refusal (not HTTP it reads, too slow): answered, the line closed."""
        conn.close_after = True
        self._send(conn, json_response(status, error_body(why, INVALID), close=True))

    def _send(self, conn: _Conn, response: Response) -> None:
        conn.close_after = conn.close_after or response.close
        conn.out = memoryview(render(response, conn.close_after))
        conn.state, conn.deadline = "send", self._due(self.limits.request_s)
        try:
            self._flush(conn)
        except OSError:
            self._drop(conn)

    def _flush(self, conn: _Conn) -> None:
        try:
            sent = conn.sock.send(conn.out)
        except BlockingIOError:
            sent = 0
        conn.out = conn.out[sent:]
        if conn.out:
            self._want(conn, selectors.EVENT_WRITE)
        elif conn.close_after:
            self._linger(conn)
        else:  # kept alive: the next request, maybe already here
            conn.state, conn.since, conn.head = "idle", time.monotonic(), None
            conn.deadline = self._due(self.limits.idle_s)
            self._want(conn, selectors.EVENT_READ)
            self._advance(conn)

    # -- closing --------------------------------------------------------------------------

    def _linger(self, conn: _Conn) -> None:
        self._open.discard(conn)
        if conn not in self._closing and len(self._closing) >= self.limits.connections:
            self._drop(conn)
            return
        self._closing.add(conn)
        conn.sock.shutdown(socket.SHUT_WR)
        conn.state, conn.deadline, conn.buf = "linger", self._due(LINGER_S), bytearray()
        self._want(conn, selectors.EVENT_READ)

    def _sweep(self) -> None:
        now = time.monotonic()
        self._next = now + 1.0
        if self._paused_until is not None and now >= self._paused_until:
            self._paused_until = None
            self._selector.register(self._listener, selectors.EVENT_READ, "listener")
        for conn in [*self._open, *self._closing]:
            if conn.state == "busy":
                continue
            if now < conn.deadline:
                self._next = min(self._next, conn.deadline)
            elif conn.state in ("head", "body", "drain"):
                why = f"the request did not arrive whole within {self.limits.request_s:g} s"
                self._refuse(conn, 408, why)
            else:  # idle past its bound, a reply not taken, a lingering line done
                self._drop(conn)

    def _due(self, seconds: float) -> float:
        at = time.monotonic() + seconds
        self._next = min(self._next, at)
        return at

    def _want(self, conn: _Conn, events: int) -> None:
        if events == conn.events:
            return
        if not conn.events:
            self._selector.register(conn.sock, events, conn)
        elif not events:
            self._selector.unregister(conn.sock)
        else:
            self._selector.modify(conn.sock, events, conn)
        conn.events = events

    def _drop(self, conn: _Conn) -> None:
        if conn.events:
            with contextlib.suppress(KeyError, ValueError):
                self._selector.unregister(conn.sock)
            conn.events = 0
        self._open.discard(conn)
        self._closing.discard(conn)
        conn.sock.close()

    def _shut(self) -> None:
        for conn in [*self._open, *self._closing]:
            with contextlib.suppress(Exception):
                self._drop(conn)
        self._jobs.put(None)
        for sock in (self._listener, self._wake_r, self._wake_w):
            sock.close()
        self._selector.close()
