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
            try:
                self.send_response(reply.status)
                headers = {"content-type": "application/json", **reply.headers}
                headers["content-length"] = str(len(payload))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
