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
parameter ``chat_request`` cannot take: 400 naming it and its value) or the
endpoint (an HTTP 4xx about the request, the ``ModelError`` blamed on it: 400 with the
endpoint's reason). Each is kept as an exchange with its error, and counts as a turn (toward
``calls``) and as a refusal (toward ``refused``). Only the endpoint's own failures (a 5xx, a
timeout, a replay miss: ``model error``, 502) count as neither: they are no turn the agent took.

An agent may offer the model ``tools`` (``chat_request.py``): they go to the endpoint with the
history's calls and results, the reply's calls come back as the endpoint sent them
(``message.tool_calls``, ``finish_reason: "tool_calls"``), their JSON counts toward the worst
case, and each call is one of the agent's steps in its trajectory (``loop.py``). Message parts (``[{"type": "text", ...}]``) are joined; a ``stream: true`` request gets the reply
as server-sent events ending in a usage chunk, whether or not it asked for one.

It listens on a Unix socket (the sandboxed agent reaches it through a forwarder inside its own
network namespace, ``forwarder.py``) or on 127.0.0.1 (an agent run in the harness's own
process). Its connections are served by one selectors loop (``http_server.py``), whatever their
number: at most ``BridgeLimits.connections`` at once, each closed when idle past ``idle_s`` or
when a request does not arrive whole within ``request_s``, malformed HTTP answered 400 with the
reason. One call at a time: requests are answered in turn, by one thread (``bridge_routes.py``).
"""

from __future__ import annotations

import math
import os
import socket
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal, TypeAlias

from ..models.base import Completion, Model, ModelError, ModelRequest, Usage, cost_of
from .bridge_routes import respond
from .chat_request import BadRequest, ChatRequest, params_of, prompt_bound, read_chat
from .http_server import BACKLOG, LoopServer, ServerLimits
from .openai_wire import INVALID, error_body, reply_body
from .openai_wire import stream_events as stream_events  # where it was, for its callers

DEFAULT_MAX_TOKENS = 4096
# A body refused for its size is still read (in pieces, and dropped) up to this many bytes, so
# the agent's client, still sending it, gets the 413; a larger one is refused on a closed line.
DRAIN_MAX = 32 << 20
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
    # The bridge's connections (``http_server.py``): at most this many open at once (past it
    # the one idle longest is closed to make room, or, none idle, the newcomer is answered 503);
    # one with no request begun is closed after ``idle_s``; a request must arrive whole, and its
    # reply be taken, within ``request_s`` (else 408 and closed). Bodies held at once: at most
    # ``connections`` * ``body_bytes``.
    connections: int = 32
    idle_s: float = 30.0
    request_s: float = 30.0


@dataclass(frozen=True)
class Exchange:
    """One call the agent made: what it sent, and the reply or why there was none."""

    index: int
    messages: tuple[dict[str, Any], ...]  # () when the request could not be read
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
    _servers: list[LoopServer] = field(default_factory=list)
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
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(path))
        os.chmod(path, 0o666)  # the sandbox's user may differ from ours in a user namespace
        self._serve(listener)
        return path

    def start_tcp(self, host: str = "127.0.0.1") -> str:
        """Serve on a free loopback port; returns the base URL (``http://127.0.0.1:N/v1``)."""
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, 0))
        self._serve(listener)
        return f"http://{host}:{listener.getsockname()[1]}/v1"

    def _serve(self, listener: socket.socket) -> None:
        listener.listen(BACKLOG)
        limits = self.limits
        server = LoopServer(
            listener,
            partial(respond, self),
            ServerLimits(
                limits.connections, limits.idle_s, limits.request_s, limits.body_bytes, DRAIN_MAX
            ),  # fmt: skip
        )
        self._started = time.monotonic()
        self._servers.append(server)
        server.start()

    def close(self) -> None:
        while self._servers:
            self._servers.pop().close()

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
        return error_body(why, kind)

    def _answer(self, body: Mapping[str, Any]) -> tuple[int, dict[str, Any], Exchange]:
        call = _Call(params=params_of(body), stream=body.get("stream") is True)
        over = self._over()
        if over is not None:
            return self._limited(call, over)
        try:
            chat = read_chat(body)
        except BadRequest as exc:
            return 400, error_body(str(exc), INVALID), self._keep(call, None, str(exc), "request")
        call.messages = chat.messages
        cap = self.limits.max_completion_tokens
        cap = min(chat.max_tokens, cap) if chat.max_tokens is not None else cap
        over = self._unaffordable(chat, cap)
        if over is not None:
            return self._limited(call, over)
        request = ModelRequest(
            messages=chat.messages,
            temperature=chat.temperature,
            max_completion_tokens=cap,
            seed=chat.seed,
            stop=chat.stop,
            tools=chat.tools,
            tool_choice=chat.tool_choice,
            item=self.item,
            turn=len(self.exchanges),
        )
        try:
            completion = self.model.complete(request)
        except ModelError as exc:
            if exc.blame == "request":  # the endpoint refused what the agent asked: its own
                why = f"refused by the endpoint: {exc}"
                return 400, error_body(why, INVALID), self._keep(call, None, why, "request")
            why = f"model error: {exc}"
            return 502, error_body(why, "model_error"), self._keep(call, None, why, "endpoint")
        kept = self._keep(call, completion, None, None)
        return 200, reply_body(completion, self.model_name, kept.index), kept

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
        return 429, error_body(why, "limit_reached"), self._keep(call, None, why, "limit")

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

    def _unaffordable(self, chat: ChatRequest, cap: int) -> str | None:
        """The limit this request could pass at its worst (every prompt byte a token, the
        whole reply cap used), or None. An unpriced model's cost has no worst case: its
        calls are capped after the fact only."""
        limits = self.limits
        prompt = prompt_bound(chat.messages, chat.tools)
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

    messages: tuple[dict[str, Any], ...] = ()
    params: dict[str, Any] = field(default_factory=dict)
    stream: bool = False
    began: float = field(default_factory=time.monotonic)
    arrived: float = field(default_factory=time.time)
