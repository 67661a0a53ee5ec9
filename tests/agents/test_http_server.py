"""The bridge's connections (``agents/http_server.py``), as a hostile or broken client meets
them: a flood of idle lines costs no thread and no call, the bound refuses with a reason,
silence and slowness are closed, what is not HTTP is a 400 with the reason, and a well-behaved
client keeps its line alive across calls."""

from __future__ import annotations

import json
import os
import re
import resource
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest

from pytest_toolpolicy.agents.bridge import Bridge, BridgeLimits
from pytest_toolpolicy.agents.http_server import THREADS
from pytest_toolpolicy.models.base import Completion, ModelRequest, Usage

from .test_bridge import GO, Stub

CHAT = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
CALL = json.dumps({"model": "m", "messages": GO}).encode()
FLOOD = 2000


def threads() -> int:
    return len(os.listdir("/proc/self/task"))


def port_of(bridge: Bridge) -> int:
    return int(bridge.start_tcp().rsplit(":", 1)[1].split("/")[0])


def read_all(conn: socket.socket) -> bytes:
    """Everything until the bridge closes the line (a 10 s stall fails the test)."""
    conn.settimeout(10)
    answer = b""
    while chunk := conn.recv(65536):
        answer += chunk
    return answer


def ended(conn: socket.socket) -> bool:
    """Whether the bridge closed ``conn`` (EOF, or reset), without waiting."""
    conn.setblocking(False)
    try:
        return conn.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def unix_client(path: Path) -> openai.OpenAI:
    """An agent's SDK on the bridge's Unix socket, as the forwarder gives it one."""
    transport = httpx.HTTPTransport(uds=str(path))
    return openai.OpenAI(base_url="http://bridge/v1", api_key="x", max_retries=0,
                         http_client=httpx.Client(transport=transport))  # fmt: skip


@pytest.fixture
def many_descriptors() -> Iterator[None]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = FLOOD + 1000
    if hard != resource.RLIM_INFINITY and hard < want:
        pytest.skip(f"the flood needs {want} descriptors; this process may have {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, want), hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_flood_of_idle_connections_costs_no_thread_and_the_next_call_is_served(
    tmp_path: Path, many_descriptors: None
) -> None:
    before = threads()
    with Bridge(Stub(), BridgeLimits(calls=5)) as bridge:
        path = bridge.start_unix(tmp_path / "sock")
        flood = []
        for _ in range(FLOOD):
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            conn.connect(str(path))
            flood.append(conn)
        reply = unix_client(path).chat.completions.create(model="m", messages=GO)  # type: ignore[arg-type]
        held = threads()  # every line of the flood accepted by now, and still open here
        assert reply.choices[0].message.content == "reply 1"
        # accepted in order, so every line of the flood was by then: all but the bound's
        # worth were closed to make room (the oldest first), and the call took one more
        closed = sum(1 for conn in flood if ended(conn))
        assert closed >= FLOOD - bridge.limits.connections
        assert ended(flood[0]) and bridge.exchanges[0].completion is not None
        for conn in flood:
            conn.close()
    assert held <= before + THREADS


def test_past_the_bound_with_none_idle_a_newcomer_gets_503_naming_it() -> None:
    with Bridge(Stub(), BridgeLimits(connections=4)) as bridge:
        port = port_of(bridge)
        begun = [socket.create_connection(("127.0.0.1", port)) for _ in range(4)]
        for conn in begun:
            conn.sendall(CHAT)  # a request begun: not idle, so not closed to make room
        late = socket.create_connection(("127.0.0.1", port))
        head, _, body = read_all(late).partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 503 ") and b"Connection: close" in head
        error = json.loads(body)["error"]
        assert error["type"] == "server_busy"
        assert error["message"].startswith("too many connections: the bridge holds at most 4")
        for conn in begun:
            conn.close()
        assert bridge.exchanges == []  # no turn, no refusal of the agent's


def test_a_silent_connection_is_closed_and_a_slow_request_gets_408() -> None:
    with Bridge(Stub(), BridgeLimits(idle_s=0.2, request_s=0.2)) as bridge:
        port = port_of(bridge)
        with socket.create_connection(("127.0.0.1", port)) as silent:
            assert read_all(silent) == b""
        for partial in (CHAT, CHAT + b"Content-Length: 100\r\n\r\n{"):
            with socket.create_connection(("127.0.0.1", port)) as slow:
                slow.sendall(partial)
                head, _, body = read_all(slow).partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 408 ")
            assert json.loads(body)["error"]["message"] == (
                "the request did not arrive whole within 0.2 s"
            )
        assert bridge.exchanges == []


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"GARBAGE\r\n\r\n", "bad request line: 'GARBAGE'"),
        (b"POST /v1/chat/completions HTTP/2.0\r\n\r\n", "unsupported HTTP version: 'HTTP/2.0'"),
        (CHAT + b"X-Pad: " + b"a" * (70 << 10) + b"\r\n\r\n", "the request's head passes 65536"),
        (CHAT + b"no colon\r\n\r\n", "bad header line: 'no colon'"),
    ],
)
def test_what_is_not_http_is_a_400_with_the_reason(
    raw: bytes, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    with Bridge(Stub()) as bridge:
        port = port_of(bridge)
        with socket.create_connection(("127.0.0.1", port)) as conn:
            conn.sendall(raw)
            head, _, body = read_all(conn).partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400 ") and b"Connection: close" in head
        assert json.loads(body)["error"]["message"].startswith(reason)
        assert bridge.exchanges == [] and caplog.records == []
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="x", max_retries=0)
        client.chat.completions.create(model="m", messages=GO)  # type: ignore[arg-type]
        assert len(bridge.served()) == 1


@pytest.mark.parametrize(
    ("sizes", "problem"),
    [
        (b"Content-Length: 5\r\nContent-Length: 5\r\n", "Content-Length given 2 times"),
        (b"Content-Length: five\r\n", "Content-Length 'five' is not a size"),
        (b"Transfer-Encoding: chunked\r\n", "Transfer-Encoding is not taken"),
    ],
)
def test_a_chat_request_of_unknown_length_is_refused_as_the_agents(
    sizes: bytes, problem: str
) -> None:
    with Bridge(Stub()) as bridge:
        with socket.create_connection(("127.0.0.1", port_of(bridge))) as conn:
            conn.sendall(CHAT + sizes + b"\r\n{}")
            head, _, body = read_all(conn).partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 400 ") and b"Connection: close" in head
        why = f"a chat request needs a Content-Length and a body ({problem}"
        assert json.loads(body)["error"]["message"].startswith(why)
        (kept,) = bridge.exchanges
        assert kept.fault == "request" and kept.error is not None and kept.error.startswith(why)


def test_one_line_carries_many_calls_pipelined_or_after_100_continue() -> None:
    one = CHAT + b"Content-Length: %d\r\n\r\n%s" % (len(CALL), CALL)
    with Bridge(Stub()) as bridge, socket.create_connection(("127.0.0.1", port_of(bridge))) as conn:
        conn.sendall(one + one)  # two at once: answered in turn
        conn.sendall(CHAT + b"Expect: 100-continue\r\nContent-Length: %d\r\n\r\n" % len(CALL))
        conn.settimeout(10)
        got = b""
        while got.count(b"HTTP/1.1 ") < 3:
            got += conn.recv(65536)
        assert got.endswith(b"HTTP/1.1 100 Continue\r\n\r\n")
        conn.sendall(CALL + b"GET /v1/models HTTP/1.1\r\nConnection: close\r\n\r\n")
        got += read_all(conn)
    statuses = re.findall(rb"HTTP/1\.1 (\d{3}) ", got)
    assert statuses == [b"200", b"200", b"100", b"200", b"200"]
    assert [e.completion.text for e in bridge.exchanges if e.completion] == [
        "reply 1", "reply 2", "reply 3"]  # fmt: skip
    assert b'"id": "toolpolicy-bridge"' in got


class Held:
    """A model whose call lasts until the test lets it go."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.entered = threading.Event()

    def complete(self, request: ModelRequest) -> Completion:
        self.entered.set()
        assert self.release.wait(30)
        return Completion("late", Usage(1, 1), 0.0, 0.01, model="held")


def test_a_call_in_progress_holds_up_no_other_connection() -> None:
    """The model answers one call at a time, yet the loop goes on: while it is held, another
    line's malformed request is refused and a third line's keep-alive call waits its turn."""
    model = Held()
    with Bridge(model) as bridge:  # type: ignore[arg-type]
        port = port_of(bridge)
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="x", max_retries=0)
        first = threading.Thread(target=client.chat.completions.create,
                                 kwargs={"model": "m", "messages": GO})  # fmt: skip
        first.start()
        assert model.entered.wait(10)
        with socket.create_connection(("127.0.0.1", port)) as other:
            other.sendall(b"GARBAGE\r\n\r\n")
            assert read_all(other).startswith(b"HTTP/1.1 400 ")
        assert first.is_alive()  # the held call was still being answered
        model.release.set()
        first.join(10)
        assert [e.completion.text for e in bridge.exchanges if e.completion] == ["late"]
