"""A chat-completions server on 127.0.0.1 for tests: scripted replies, recorded requests.

Each request gets the next scripted ``Reply``; the last one repeats once the script runs out, so
``[Reply(status=500)]`` fails forever. Nothing here ever listens beyond loopback.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

# An inherited proxy setting would send the stub's traffic off this machine.
_ROUTING_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "OPENAI_BASE_URL")


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: Any = None  # sent as JSON
    raw: bytes | None = None  # sent as-is instead of ``body`` (a malformed response)
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering; a hung server is a long delay
    # Seconds between single bytes of the body (a drip that never trips a per-read timeout);
    # with ``drip_head`` the status line and headers drip too.
    drip: float = 0.0
    drip_head: bool = False
    # A body of this many bytes made on the fly (never held), or an endless one when -1; the
    # content-length is announced only when ``announce`` is true.
    size: int = 0
    announce: bool = True


@dataclass(frozen=True)
class Recorded:
    path: str
    headers: dict[str, str]  # lower-cased names
    body: dict[str, Any]


def chat_body(text: str = "ok", usage: dict[str, Any] | None = None, **extra: Any) -> dict:
    body: dict[str, Any] = {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": 0,
        "model": "stub-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        **extra,
    }
    if usage is not None:
        body["usage"] = usage
    return body


def ok(text: str = "ok", usage: dict[str, Any] | None = None) -> Reply:
    return Reply(body=chat_body(text, usage or {"prompt_tokens": 10, "completion_tokens": 2}))


def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _ROUTING_VARS:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


class StubServer:
    def __init__(self, *replies: Reply) -> None:
        self.replies = list(replies) or [ok()]
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> StubServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._released.set()  # wakes handlers still "hanging"
        self._httpd.shutdown()
        self._httpd.server_close()

    def _next(self, recorded: Recorded) -> Reply:
        with self._lock:
            self.requests.append(recorded)
            return self.replies[min(len(self.requests), len(self.replies)) - 1]


def _handler(stub: StubServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length)
            received = {k.lower(): v for k, v in self.headers.items()}
            reply = stub._next(Recorded(self.path, received, json.loads(raw or b"{}")))
            if reply.delay and stub._released.wait(reply.delay):
                return
            payload = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
            length = reply.size if reply.size else len(payload)
            headers = {"content-type": "application/json", **reply.headers}
            if length >= 0 and reply.announce:
                headers["content-length"] = str(length)
            head = f"HTTP/1.0 {reply.status} Stub\r\n" + "".join(
                f"{name}: {value}\r\n" for name, value in headers.items()
            )
            try:
                self._send(head.encode() + b"\r\n", reply.drip if reply.drip_head else 0)
                if reply.size:
                    self._send_size(reply.size)
                else:
                    self._send(payload, reply.drip)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout or size test)

        def _send(self, data: bytes, drip: float) -> None:
            if not drip:
                self.wfile.write(data)
                return
            for i in range(len(data)):
                self.wfile.write(data[i : i + 1])
                self.wfile.flush()
                if stub._released.wait(drip):
                    return

        def _send_size(self, size: int) -> None:
            block = b" " * (1 << 16)  # JSON whitespace: a body that is valid but for its size
            sent = 0
            while size < 0 or sent < size:
                chunk = block if size < 0 else block[: size - sent]
                self.wfile.write(chunk)
                sent += len(chunk)
                if stub._released.is_set():
                    return

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
