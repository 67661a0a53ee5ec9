"""The forwarder (``agents/forwarder.py``), run as the sandbox runs it — a process of its own
listening on a loopback port, relaying to the bridge's Unix socket — here on the host's
loopback, under the harness's interpreter and under Python 3.8 (its oldest)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import openai
import pytest

from pytest_toolpolicy.agents import forwarder
from pytest_toolpolicy.agents.bridge import Bridge, BridgeLimits

from ..grading.test_grade_pytest_versions import pyenv_python
from .test_bridge import GO, Stub
from .test_http_server import ended, threads

SCRIPT = Path(forwarder.__file__)
PYTHONS = [pytest.param(sys.executable, id="harness")] + [
    pytest.param(
        pyenv_python("3.8") or "python3.8",
        id="3.8",
        marks=pytest.mark.skipif(pyenv_python("3.8") is None, reason="no Python 3.8 here"),
    )
]
FLOOD = 500


@dataclass
class Relayed:
    bridge: Bridge
    port: int
    process: subprocess.Popen[bytes]

    def client(self, retries: int = 0) -> openai.OpenAI:
        url = f"http://127.0.0.1:{self.port}/v1"
        return openai.OpenAI(base_url=url, api_key="x", max_retries=retries)

    def threads(self) -> int:
        return len(os.listdir(f"/proc/{self.process.pid}/task"))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(params=PYTHONS)
def relayed(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Relayed]:
    with Bridge(Stub(), BridgeLimits(calls=50)) as bridge:
        path = bridge.start_unix(tmp_path / "sock")
        port = free_port()
        process = subprocess.Popen(
            [request.param, str(SCRIPT), str(path), str(port), "--", "sleep", "600"],
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 20
            while True:  # until it listens
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    assert process.poll() is None and time.monotonic() < deadline
                    time.sleep(0.05)
            yield Relayed(bridge, port, process)
        finally:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def test_calls_and_streams_are_relayed_on_a_kept_line(relayed: Relayed) -> None:
    client = relayed.client()
    for n in (1, 2):
        reply = client.chat.completions.create(model="m", messages=GO)  # type: ignore[arg-type]
        assert reply.choices[0].message.content == f"reply {n}"
    chunks = list(client.chat.completions.create(model="m", messages=GO, stream=True))  # type: ignore[arg-type]
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "reply 3"
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 21


def post_huge(port: int, size: int) -> tuple[bytes, bool]:
    """A chat request with a ``size``-byte body, sent whole before the answer is read, as an
    agent's client sends it (httpx, http.client): (the answer, whether it ended in EOF within
    10 s)."""
    head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % size
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        answer = b""
        try:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # answered: read it
                conn.sendall(head + b"x" * size)
            while chunk := conn.recv(65536):
                answer += chunk
        except TimeoutError:
            return answer, False
    return answer, True


def test_a_50_mb_body_gets_its_413_and_eof_every_time(relayed: Relayed) -> None:
    for attempt in range(5):
        answer, ended = post_huge(relayed.port, 50 << 20)
        assert ended, f"attempt {attempt}: no EOF after {answer[:60]!r}"
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 413 "), (attempt, answer[:60])
        assert json.loads(body)["error"]["message"].startswith(f"body too large: {50 << 20} bytes")
    assert [e.fault for e in relayed.bridge.exchanges] == ["request"] * 5
    reply = relayed.client().chat.completions.create(model="m", messages=GO)  # type: ignore[arg-type]
    assert reply.choices[0].message.content == "reply 1"


def test_a_flood_of_idle_connections_leaves_the_next_call_served(relayed: Relayed) -> None:
    """500 idle lines: past its bound the forwarder closes a newcomer at once, the bridge closes
    the idlest to make room, and neither process runs a thread per line."""
    before = threads()
    flood = [socket.create_connection(("127.0.0.1", relayed.port)) for _ in range(FLOOD)]
    gone: set[int] = set()
    deadline = time.monotonic() + 30
    # every line but the bridge's bound is ended: refused by the forwarder, or relayed and
    # closed by the bridge to make room for a newer one
    while len(gone) < FLOOD - relayed.bridge.limits.connections:
        assert time.monotonic() < deadline, f"{len(gone)} of {FLOOD} ended"
        gone.update(n for n, conn in enumerate(flood) if n not in gone and ended(conn))
        time.sleep(0.05)
    forwarder_threads, harness_threads = relayed.threads(), threads()  # the flood still held
    reply = relayed.client().chat.completions.create(model="m", messages=GO)  # type: ignore[arg-type]
    assert reply.choices[0].message.content == "reply 1"
    for conn in flood:
        conn.close()
    assert forwarder_threads <= 2  # its main thread, waiting on the agent, and the relay
    assert harness_threads <= before  # the bridge's own two were there before
    assert len(relayed.bridge.exchanges) == 1
