"""The bridge: a loopback OpenAI-compatible endpoint serving one item's external agent.

Every chat completion the agent asks for is answered by the session's model (``Model``: an
``openai:`` or ``local:`` endpoint, ``scripted``, the record/replay cache in front of either),
so the agent never holds the endpoint's key, its tokens are the endpoint's own report, and its
cost comes from the project's price table — the agent's own accounting is never read. Each
request and reply is kept, in order, as an ``Exchange``: the item's trajectory is built from
them. The item's limits (calls, tokens, cost, wall time) are enforced here: the call that
would pass one is refused (429 ``limit_reached``), and ``stopped`` says which limit ended the
run, so the runner stops the agent instead of waiting for it. Tokens and cost are capped
within a call too: a request whose worst case (``chat_request.prompt_bound`` plus the reply
cap it would be sent with, at the model's price) passes what remains is refused unsent.

A request the agent got wrong is its own failure, whoever refuses it: the bridge (a body past
``BridgeLimits.body_bytes``: 413 read from its Content-Length, never read whole; not JSON; a
parameter ``chat_request`` cannot take: 400 naming it and its value; tools offered) or the
endpoint (an HTTP 4xx about the request, the ``ModelError`` blamed on it: 400 with the
endpoint's reason). Each is kept as an exchange with its error, and counts as a turn (toward
``calls``) and as a refusal (toward ``refused``). Only the endpoint's own failures (a 5xx, a
timeout, a replay miss: ``model error``, 502) count as neither: they are no turn the agent took.

What the bridge serves is text: a request that offers the model ``tools`` is refused with a
message naming the agent's text mode, since the session's model seam is chat text in, text out.
Message parts (``[{"type": "text", ...}]``) are joined; a ``stream: true`` request gets the reply
as server-sent events ending in a usage chunk, whether or not it asked for one.

It listens on a Unix socket (the sandboxed agent reaches it through a forwarder inside its own
network namespace, ``forwarder.py``) or on 127.0.0.1 (an agent run in the harness's own
process). One call at a time: an agent that sends two at once waits for the first.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import socket
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeAlias

from .. import jsonsafe
from ..models.base import Completion, Model, ModelError, ModelRequest, Usage, cost_of
from .chat_request import BadRequest, params_of, prompt_bound, read_chat
from .stdlib import ensure_stdlib

ensure_stdlib("socketserver")  # before http.server imports it: see stdlib.py
import socketserver  # noqa: E402
from http.server import BaseHTTPRequestHandler  # noqa: E402

log = logging.getLogger(__name__)

DEFAULT_MAX_TOKENS = 4096
# A body refused for its size is still read (in pieces, and dropped) up to this many bytes, so
# the agent's client, still sending it, gets the 413; a larger one is refused on a closed line.
DRAIN_MAX = 32 << 20
_PIECE = 1 << 16
INVALID = "invalid_request_error"
# Why an exchange has no completion: the agent's request was refused (by the bridge or the
# endpoint, or it broke the bridge), a limit was reached, or the endpoint failed.
Fault: TypeAlias = Literal["request", "limit", "endpoint"]


@dataclass(frozen=True)
class BridgeLimits:
    # The agent's turns: calls served, and its own requests refused (``Exchange.turn``)
    calls: int | None = None
    # Prompt + completion tokens, and $, over the run: a call whose worst case would pass what
    # is left is refused unsent
    tokens: int | None = None
    cost_usd: float | None = None
    seconds: float | None = None  # wall time from the bridge's start
    max_completion_tokens: int = DEFAULT_MAX_TOKENS  # a reply's cap, whatever the agent asks
    # Requests refused (the agent's own mistakes, a limit): an agent that only retries them
    # would otherwise spin until its wall time.
    refused: int | None = 10
    # A request body past this is refused (413) from its Content-Length, unread: 4 MiB of
    # text is some million tokens, past any model's context.
    body_bytes: int = 4 << 20


@dataclass(frozen=True)
class Exchange:
    """One call the agent made: what it sent, and the reply or why there was none."""

    index: int
    messages: tuple[dict[str, str], ...]  # () when the request could not be read
    params: dict[str, Any]
    completion: Completion | None
    error: str | None = None  # the refusal or the model's failure, as the agent was told
    stream: bool = False
    seconds: float = 0.0  # the bridge's own time for the call, model time included
    # When the call arrived (``time.time()``, one clock in and out of the sandbox): a step an
    # agent reports after it, and before the next call, came of its reply.
    at: float = 0.0
    fault: Fault | None = None  # why there is no completion (None: served)

    @property
    def turn(self) -> bool:
        """A turn the agent took: served, or its own request refused (not a limit's refusal,
        not the endpoint's failure)."""
        return self.completion is not None or self.fault == "request"

    @property
    def refused(self) -> bool:
        return self.completion is None and self.fault in ("request", "limit")


@dataclass
class Bridge:
    model: Model
    limits: BridgeLimits = field(default_factory=BridgeLimits)
    item: str = ""
    model_name: str = "toolpolicy-bridge"
    exchanges: list[Exchange] = field(default_factory=list)
    stopped: str | None = None  # the limit that ended the run ("calls: 30 reached", ...)
    _server: socketserver.BaseServer | None = None
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _started: float = 0.0

    # -- the run's totals -------------------------------------------------------------------

    @property
    def tokens(self) -> int:
        return sum(e.completion.usage.total_tokens for e in self.exchanges if e.completion)

    @property
    def cost_usd(self) -> float | None:
        costs = [e.completion.cost_usd for e in self.exchanges if e.completion]
        return None if any(c is None for c in costs) else float(sum(c or 0.0 for c in costs))

    # -- serving ----------------------------------------------------------------------------

    def start_unix(self, path: Path) -> Path:
        """Serve on a new Unix socket at ``path`` (its directory the caller's own)."""
        server = _UnixServer(str(path), _handler(self))
        os.chmod(path, 0o666)  # the sandbox's user may differ from ours in a user namespace
        self._serve(server)
        return path

    def start_tcp(self, host: str = "127.0.0.1") -> str:
        """Serve on a free loopback port; returns the base URL (``http://127.0.0.1:N/v1``)."""
        server = _TCPServer((host, 0), _handler(self))
        self._serve(server)
        return f"http://{host}:{server.server_address[1]}/v1"

    def _serve(self, server: socketserver.BaseServer) -> None:
        self._server = server
        self._started = time.monotonic()
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> Bridge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- one call ---------------------------------------------------------------------------

    def answer(self, body: Mapping[str, Any]) -> tuple[int, dict[str, Any], Exchange]:
        """(HTTP status, response body, the exchange kept) for one chat request."""
        with self._lock:
            return self._answer(body)

    def refuse(self, why: str, kind: str = INVALID) -> dict[str, Any]:
        """Keep a request refused before it could be read (too large, not JSON, a bridge
        fault) as the agent's; the response body to send."""
        with self._lock:
            self._keep(_Call(), None, why, "request")
        return _error(why, kind)

    def _answer(self, body: Mapping[str, Any]) -> tuple[int, dict[str, Any], Exchange]:
        call = _Call(params=params_of(body), stream=body.get("stream") is True)
        over = self._over()
        if over is not None:
            return self._limited(call, over)
        try:
            chat = read_chat(body)
        except BadRequest as exc:
            return 400, _error(str(exc), INVALID), self._keep(call, None, str(exc), "request")
        call.messages = chat.messages
        if chat.tools:
            why = ("the bridge serves chat text: this agent offered the model tools; run it in "
                   "its text mode (mini-swe-agent's text model class, smolagents' CodeAgent)")  # fmt: skip
            return 400, _error(why, INVALID), self._keep(call, None, why, "request")
        cap = self.limits.max_completion_tokens
        cap = min(chat.max_tokens, cap) if chat.max_tokens is not None else cap
        over = self._unaffordable(chat.messages, cap)
        if over is not None:
            return self._limited(call, over)
        request = ModelRequest(
            messages=chat.messages,
            temperature=chat.temperature,
            max_completion_tokens=cap,
            seed=chat.seed,
            stop=chat.stop,
            item=self.item,
            turn=len(self.exchanges),
        )
        try:
            completion = self.model.complete(request)
        except ModelError as exc:
            if exc.blame == "request":  # the endpoint refused what the agent asked: its own
                why = f"refused by the endpoint: {exc}"
                return 400, _error(why, INVALID), self._keep(call, None, why, "request")
            why = f"model error: {exc}"
            return 502, _error(why, "model_error"), self._keep(call, None, why, "endpoint")
        kept = self._keep(call, completion, None, None)
        return 200, _reply(completion, self.model_name, kept.index), kept

    def _keep(
        self, call: _Call, completion: Completion | None, error: str | None, fault: Fault | None
    ) -> Exchange:
        done = Exchange(len(self.exchanges), call.messages, call.params, completion, error,
                        call.stream, round(time.monotonic() - call.began, 6), call.arrived,
                        fault)  # fmt: skip
        self.exchanges.append(done)
        if done.refused and self.limits.refused is not None:
            refused = sum(1 for e in self.exchanges if e.refused)
            if refused >= self.limits.refused:
                self.stopped = self.stopped or f"refused: {refused} requests refused"
        return done

    def _limited(self, call: _Call, over: str) -> tuple[int, dict[str, Any], Exchange]:
        self.stopped = self.stopped or over
        why = f"limit reached: {over}"
        return 429, _error(why, "limit_reached"), self._keep(call, None, why, "limit")

    def _over(self) -> str | None:
        """The limit the next call would pass, or None."""
        limits = self.limits
        if limits.calls is not None and len(self.turns()) >= limits.calls:
            return f"calls: {limits.calls} made"
        if limits.tokens is not None and self.tokens >= limits.tokens:
            return f"tokens: {self.tokens} of {limits.tokens}"
        cost = self.cost_usd
        if limits.cost_usd is not None and cost is not None and cost >= limits.cost_usd:
            return f"cost: ${cost:.4f} of ${limits.cost_usd:g}"
        if limits.seconds is not None and time.monotonic() - self._started >= limits.seconds:
            return f"time: {limits.seconds:g}s"
        return None

    def _unaffordable(self, messages: tuple[dict[str, str], ...], cap: int) -> str | None:
        """The limit this request could pass at its worst (every prompt byte a token, the
        whole reply cap used), or None. An unpriced model's cost has no worst case: its
        calls are capped after the fact only."""
        limits = self.limits
        prompt = prompt_bound(messages)
        most = prompt + cap
        worst = f"{prompt} prompt tokens at most + {cap} completion"
        if limits.tokens is not None and self.tokens + most > limits.tokens:
            left = limits.tokens - self.tokens
            return (
                f"tokens: this request could take {most} ({worst}), {left} of {limits.tokens} left"
            )
        spent = self.cost_usd
        if limits.cost_usd is None or spent is None:
            return None
        price: float | None
        try:
            price = cost_of(self.model, Usage(prompt, cap))
        except ValueError:  # counts past any the price table takes: no cap holds it
            price = math.inf
        if price is not None and spent + price > limits.cost_usd:
            return (
                f"cost: this request could cost ${price:.4f} ({worst}),"
                f" ${limits.cost_usd - spent:.4f} of ${limits.cost_usd:g} left"
            )
        return None

    def served(self) -> list[Exchange]:
        return [e for e in self.exchanges if e.completion is not None]

    def turns(self) -> list[Exchange]:
        return [e for e in self.exchanges if e.turn]


@dataclass
class _Call:
    """One request as it is being answered: what its exchange will keep."""

    messages: tuple[dict[str, str], ...] = ()
    params: dict[str, Any] = field(default_factory=dict)
    stream: bool = False
    began: float = field(default_factory=time.monotonic)
    arrived: float = field(default_factory=time.time)


def _usage(completion: Completion) -> dict[str, int]:
    usage = completion.usage
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.total_tokens,
    }


def _reply(completion: Completion, model: str, index: int) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-bridge-{index}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": completion.text},
                "finish_reason": "stop",
            }
        ],
        "usage": _usage(completion),
    }


def _error(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "code": kind}}


def _one_line(text: str, chars: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= chars else text[: chars - 1] + "\u2026"


def stream_events(reply: Mapping[str, Any]) -> list[bytes]:
    """A reply as server-sent events: its text in one chunk, then the usage chunk, then
    ``[DONE]`` (what OpenAI sends with ``stream_options.include_usage``)."""
    base = {k: reply[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    text = reply["choices"][0]["message"]["content"]
    chunks = [
        base
        | {
            "choices": [
                {"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None}
            ]
        },  # fmt: skip
        base | {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        base | {"choices": [], "usage": reply["usage"]},
    ]
    return [f"data: {json.dumps(c)}\n\n".encode() for c in chunks] + [b"data: [DONE]\n\n"]


def _handler(bridge: Bridge) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            if self.connection.family == socket.AF_INET:
                # The headers and the body are two writes: without this, a client's delayed
                # ACK holds the body back 40 ms a call (a Unix socket has no such delay).
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass  # the exchanges are the log

        def do_GET(self) -> None:  # noqa: N802
            if self.path.rstrip("/").endswith("/models"):
                self._json(200, {"object": "list", "data": [
                    {"id": bridge.model_name, "object": "model", "owned_by": "toolpolicy"}]})  # fmt: skip
            else:
                self._json(404, _error(f"no such path: {self.path[:200]}", "not_found"))

        def do_POST(self) -> None:  # noqa: N802
            try:
                self._post()
            except OSError:  # the line failed (the agent hung up, or stopped sending)
                self.close_connection = True
            except Exception as exc:  # noqa: BLE001 -- a last resort: never a traceback here
                why = _one_line(f"bridge fault: {type(exc).__name__}: {exc}")
                log.error("%s (item %s)", why, bridge.item or "?")
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self._json(500, bridge.refuse(why, "bridge_error"))

        def _post(self) -> None:
            if not self.path.rstrip("/").endswith("/chat/completions"):
                why = f"no such path: {self.path[:200]}"
                self._refused(404, why, self._size(), kind="not_found")
                return
            size = self._size()
            if size is None or size == 0:
                self._refused(400, "a chat request needs a Content-Length and a body", size)
                return
            limit = bridge.limits.body_bytes
            if size > limit:
                why = f"body too large: {size} bytes (the bridge takes at most {limit})"
                self._refused(413, why, size)
                return
            try:
                body = jsonsafe.loads(self.rfile.read(size))
            except ValueError as exc:
                why = _one_line(f"the body is not JSON ({exc})")
                self._json(400, bridge.refuse(why))
                return
            if not isinstance(body, dict):
                self._json(400, bridge.refuse("the body is not a JSON object"))
                return
            status, reply, kept = bridge.answer(body)
            if status == 200 and kept.stream:
                self._events(stream_events(reply))
            else:
                self._json(status, reply)

        def _size(self) -> int | None:
            """The body's announced size; None when it is not announced as one."""
            try:
                size = int(self.headers.get("Content-Length") or "")
            except ValueError:
                return None
            return size if size >= 0 else None

        def _refused(self, status: int, why: str, size: int | None, kind: str = INVALID) -> None:
            """Refuse a request whose body is not read: its bytes are dropped in pieces (up to
            ``DRAIN_MAX``) so the client, still sending, hears the answer; else the line closes."""
            reply = bridge.refuse(why, kind)
            if size is not None and size <= DRAIN_MAX:
                while size > 0:
                    piece = self.rfile.read(min(size, _PIECE))
                    if not piece:
                        break
                    size -= len(piece)
            else:
                self.close_connection = True
            self._json(status, reply)

        def _json(self, status: int, body: Mapping[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)

        def _events(self, events: list[bytes]) -> None:
            data = b"".join(events)
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


class _TCPServer(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


class _UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def get_request(self) -> tuple[socket.socket, Any]:
        conn, _ = self.socket.accept()
        return conn, ("unix", 0)  # BaseHTTPRequestHandler formats the client address
