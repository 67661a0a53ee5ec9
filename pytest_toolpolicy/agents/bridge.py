"""The bridge: a loopback OpenAI-compatible endpoint serving one item's external agent.

Every chat completion the agent asks for is answered by the session's model (``Model``: an
``openai:`` or ``local:`` endpoint, ``scripted``, the record/replay cache in front of either),
so the agent never holds the endpoint's key, its tokens are the endpoint's own report, and its
cost comes from the project's price table — the agent's own accounting is never read. Each
request and reply is kept, in order, as an ``Exchange``: the item's trajectory is built from
them. The item's limits (calls, tokens, cost, wall time) are enforced here: the call that
would pass one is refused with a clear error, and ``stopped`` says which limit ended the run,
so the runner stops the agent instead of waiting for it.

What the bridge serves is text: a request that offers the model ``tools`` is refused with a
message naming the agent's text mode, since the session's model seam is chat text in, text out.
Message parts (``[{"type": "text", ...}]``) are joined; a ``stream: true`` request gets the reply
as server-sent events ending in a usage chunk, whether or not it asked for one.

It listens on a Unix socket (the sandboxed agent reaches it through a forwarder inside its own
network namespace, ``forwarder.py``) or on 127.0.0.1 (an agent run in the harness's own
process). One call at a time: an agent that sends two at once waits for the first.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..models.base import Completion, Model, ModelError, ModelRequest
from .stdlib import ensure_stdlib

ensure_stdlib("socketserver")  # before http.server imports it: see stdlib.py
import socketserver  # noqa: E402
from http.server import BaseHTTPRequestHandler  # noqa: E402

MAX_BODY = 32 << 20  # a request larger than this is not a chat request
DEFAULT_MAX_TOKENS = 4096


@dataclass(frozen=True)
class BridgeLimits:
    calls: int | None = None  # model calls (the agent's turns)
    tokens: int | None = None  # prompt + completion tokens over the run
    cost_usd: float | None = None
    seconds: float | None = None  # wall time from the bridge's start
    max_completion_tokens: int = DEFAULT_MAX_TOKENS  # a reply's cap, whatever the agent asks
    # Requests refused before the model (tools offered, a limit): an agent that only retries
    # them would otherwise spin until its wall time.
    refused: int | None = 10


@dataclass(frozen=True)
class Exchange:
    """One call the agent made: what it sent, and the reply or why there was none."""

    index: int
    messages: tuple[dict[str, str], ...]
    params: dict[str, Any]
    completion: Completion | None
    error: str | None = None  # the refusal or the model's failure, as the agent was told
    stream: bool = False
    seconds: float = 0.0  # the bridge's own time for the call, model time included
    # When the call arrived (``time.time()``, one clock in and out of the sandbox): a step an
    # agent reports after it, and before the next call, came of its reply.
    at: float = 0.0


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

    def answer(self, body: Mapping[str, Any]) -> tuple[int, dict[str, Any], Exchange | None]:
        """(HTTP status, response body, the exchange kept) for one chat request."""
        with self._lock:
            return self._answer(body)

    def _answer(self, body: Mapping[str, Any]) -> tuple[int, dict[str, Any], Exchange | None]:
        began = time.monotonic()
        arrived = time.time()
        index = len(self.exchanges)
        stream = bool(body.get("stream"))
        try:
            messages = _messages(body)
        except ValueError as exc:
            return 400, _error(str(exc), "invalid_request_error"), None
        params = {k: body[k] for k in ("temperature", "max_tokens", "max_completion_tokens",
                                       "stop", "seed") if k in body}  # fmt: skip

        def keep(completion: Completion | None, error: str | None) -> Exchange:
            done = Exchange(index, messages, params, completion, error, stream,
                            round(time.monotonic() - began, 6), arrived)  # fmt: skip
            self.exchanges.append(done)
            if error is not None and not error.startswith("model error"):
                refused = sum(1 for e in self.exchanges if _refused(e))
                if self.limits.refused is not None and refused >= self.limits.refused:
                    self.stopped = self.stopped or f"refused: {refused} requests refused"
            return done

        if body.get("tools") or body.get("functions"):
            why = ("the bridge serves chat text: this agent offered the model tools; run it in "
                   "its text mode (mini-swe-agent's text model class, smolagents' CodeAgent)")  # fmt: skip
            return 400, _error(why, "invalid_request_error"), keep(None, why)
        over = self._over()
        if over is not None:
            self.stopped = self.stopped or over
            why = f"limit reached: {over}"
            return 429, _error(why, "limit_reached"), keep(None, why)
        asked = body.get("max_completion_tokens") or body.get("max_tokens")
        cap = self.limits.max_completion_tokens
        request = ModelRequest(
            messages=messages,
            temperature=float(body.get("temperature") or 0.0),
            max_completion_tokens=min(asked, cap)
            if isinstance(asked, int) and _whole(asked)
            else cap,
            seed=int(body["seed"]) if _whole(body.get("seed")) else None,
            stop=_stop(body.get("stop")),
            item=self.item,
            turn=index,
        )
        try:
            completion = self.model.complete(request)
        except ModelError as exc:
            why = f"model error: {exc}"
            return 502, _error(why, "model_error"), keep(None, why)
        kept = keep(completion, None)
        return 200, _reply(completion, self.model_name, index), kept

    def _over(self) -> str | None:
        """The limit the next call would pass, or None."""
        limits = self.limits
        if limits.calls is not None and len(self.served()) >= limits.calls:
            return f"calls: {limits.calls} made"
        if limits.tokens is not None and self.tokens >= limits.tokens:
            return f"tokens: {self.tokens} of {limits.tokens}"
        cost = self.cost_usd
        if limits.cost_usd is not None and cost is not None and cost >= limits.cost_usd:
            return f"cost: ${cost:.4f} of ${limits.cost_usd:g}"
        if limits.seconds is not None and time.monotonic() - self._started >= limits.seconds:
            return f"time: {limits.seconds:g}s"
        return None

    def served(self) -> list[Exchange]:
        return [e for e in self.exchanges if e.completion is not None]


def _refused(exchange: Exchange) -> bool:
    """Turned away before the model (a limit, tools offered): not a model error."""
    return exchange.completion is None and not (exchange.error or "").startswith("model error")


def _stop(value: object) -> tuple[str, ...]:
    """OpenAI's ``stop``: a string or a list of them (at most 4 there; the first 4 here)."""
    if isinstance(value, str) and value:
        return (value,)
    if isinstance(value, list):
        return tuple(v for v in value if isinstance(v, str) and v)[:4]
    return ()


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _messages(body: Mapping[str, Any]) -> tuple[dict[str, str], ...]:
    raw = body.get("messages")
    if not isinstance(raw, list) or not raw:
        raise ValueError("messages must be a non-empty list")
    out = []
    for number, message in enumerate(raw):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise ValueError(f"messages[{number}] is not a chat message with a role")
        content = message.get("content")
        if isinstance(content, list):  # parts: the text ones, in order
            content = "".join(
                p.get("text", "")
                for p in content
                if isinstance(p, dict) and p.get("type") == "text"
            )
        elif content is None:
            content = ""
        if not isinstance(content, str):
            raise ValueError(f"messages[{number}].content is neither text nor a list of parts")
        role = message["role"] if message["role"] in ("system", "user", "assistant") else "user"
        out.append({"role": role, "content": content})
    return tuple(out)


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
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._json(404, _error(f"no such path: {self.path[:200]}", "not_found"))
                return
            try:
                size = int(self.headers.get("Content-Length") or "0")
            except ValueError:
                size = -1
            if not 0 < size <= MAX_BODY:
                self._json(
                    400, _error("a chat request needs a Content-Length", "invalid_request_error")
                )
                return
            try:
                body = json.loads(self.rfile.read(size))
            except ValueError:
                self._json(400, _error("the body is not JSON", "invalid_request_error"))
                return
            if not isinstance(body, dict):
                self._json(400, _error("the body is not a JSON object", "invalid_request_error"))
                return
            status, reply, _ = bridge.answer(body)
            if status == 200 and body.get("stream"):
                self._events(stream_events(reply))
            else:
                self._json(status, reply)

        def _json(self, status: int, body: Mapping[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
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
