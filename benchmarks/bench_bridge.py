"""The bridge's overhead per model call, and how its connections hold under a flood, side by
side in one run: the bridge and forwarder of this tree, and (``--before``) a copy of earlier
ones, loaded under another module name.

Overhead: an agent's client calling a loopback OpenAI-compatible endpoint directly, then through
the bridge (the bridge's ``OpenAIModel`` calling that same endpoint), then through the path a
sandboxed agent takes (the in-sandbox forwarder, here a host process, relaying to the bridge's
Unix socket). The endpoint answers at once, so what is measured is the added hops; the sides
take turns, a round of calls each, so drift on a busy machine falls on both alike.

Connections: 2,000 idle connections to the bridge's Unix socket, then 500 to the forwarder's
port — the threads of this process (the harness's) and of the forwarder while they are held
(``/proc/<pid>/task``), and the time the agent's next call then takes; and a 50 MB body through
the forwarder five times, sent whole before the answer is read (as httpx and http.client do):
how many got their 413 and EOF within ``--huge-timeout``.

    git show HEAD:pytest_toolpolicy/agents/bridge.py > /tmp/old_bridge.py
    git show HEAD:pytest_toolpolicy/agents/forwarder.py > /tmp/old_forwarder.py
    .venv/bin/python benchmarks/bench_bridge.py --before /tmp/old_bridge.py \\
        --before-forwarder /tmp/old_forwarder.py [--calls 400]

Target (issue 31): bridge overhead per model call <= 2 ms p50.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import importlib.util
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

REPLY = json.dumps({
    "id": "x", "object": "chat.completion", "created": 0, "model": "m",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"},
                 "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
}).encode()  # fmt: skip
BODY = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi " * 200}]})
HERE = Path(__file__).resolve().parents[1] / "pytest_toolpolicy" / "agents"
BRIDGE_FLOOD, FORWARDER_FLOOD, HUGE = 2000, 500, 50 << 20


class Endpoint(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # as a real server's reply is one segment, not two

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(REPLY)))
        self.end_headers()
        self.wfile.write(REPLY)


@dataclass
class Side:
    """One bridge module and one forwarder script, served: its ports, its timings."""

    name: str
    module: ModuleType
    forwarder: Path
    times: dict[str, list[float]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def load_bridge(path: Path, name: str) -> ModuleType:
    """``path`` as a module of the package (its relative imports resolve) named ``name``."""
    full = f"pytest_toolpolicy.agents.{name}"
    spec = importlib.util.spec_from_file_location(full, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[full] = module
    spec.loader.exec_module(module)
    return module


class Connection:
    """A keep-alive client, as an agent's SDK holds one, on TCP or a Unix socket."""

    def __init__(self, port: int | None = None, path: Path | None = None) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port or 80, timeout=60)
        if path is not None:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(str(path))
            self.conn.sock = sock
        else:
            self.conn.connect()
            self.conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as httpx

    def call(self) -> float:
        start = time.perf_counter()
        self.conn.request(
            "POST", "/v1/chat/completions", BODY, {"Content-Type": "application/json"}
        )
        response = self.conn.getresponse()
        response.read()
        assert response.status == 200, response.status
        return time.perf_counter() - start


@contextlib.contextmanager
def forwarding(script: Path, sock: Path) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(script), str(sock), str(port), "--", "sleep", "3600"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        for _ in range(200):
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            time.sleep(0.05)
        yield port, process
    finally:
        os.killpg(process.pid, 9)  # the forwarder and its sleeping child
        process.wait()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def threads(pid: int | str = "self") -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def overhead(sides: list[Side], endpoint_port: int, model: Any, calls: int, rounds: int) -> None:
    with contextlib.ExitStack() as stack:
        clients: dict[tuple[str, str], Connection] = {}
        for side in sides:
            tcp = side.module.Bridge(model)
            stack.callback(tcp.close)
            unix = side.module.Bridge(model)
            stack.callback(unix.close)
            sock = Path(stack.enter_context(tempfile.TemporaryDirectory())) / "sock"
            unix.start_unix(sock)
            port, _ = stack.enter_context(forwarding(side.forwarder, sock))
            bridge_port = int(tcp.start_tcp().rsplit(":", 1)[1].split("/")[0])
            clients[side.name, "bridge (loopback TCP)"] = Connection(bridge_port)
            clients[side.name, "forwarder + bridge (Unix socket)"] = Connection(port)
            side.notes.append(f"bridge tokens: {tcp.tokens} (11 a call)")
        direct = Connection(endpoint_port)
        for client in [direct, *clients.values()]:
            for _ in range(20):  # warm up
                client.call()
        per_round = max(calls // rounds, 1)
        base: list[float] = []
        for _ in range(rounds):
            base += [direct.call() for _ in range(per_round)]
            for (name, path), client in clients.items():
                side = next(s for s in sides if s.name == name)
                side.times.setdefault(path, []).extend(client.call() for _ in range(per_round))
    p50 = statistics.median(base)
    print(f"{per_round * rounds} calls per path, one keep-alive client each, endpoint answering "
          f"at once, in {rounds} rounds taking turns")  # fmt: skip
    print(f"  {'direct':44s} p50 {1000 * p50:.2f} ms")
    for side in sides:
        for path, times in side.times.items():
            mid, p90 = statistics.median(times), statistics.quantiles(times, n=10)[-1]
            print(f"  {side.name + ': ' + path:44s} p50 {1000 * mid:.2f} ms  p90 {1000 * p90:.2f}"
                  f" ms  added p50 {1000 * (mid - p50):.2f} ms")  # fmt: skip


def flood(side: Side, model: Any) -> None:
    """Idle connections to the bridge's socket, then to the forwarder's port, held."""
    with tempfile.TemporaryDirectory() as tmp:
        before = threads()
        bridge = side.module.Bridge(model)
        sock = bridge.start_unix(Path(tmp) / "sock")
        held = []
        for _ in range(BRIDGE_FLOOD):
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            conn.connect(str(sock))
            held.append(conn)
        time.sleep(1.0)  # for a thread per connection to have started
        during = threads()
        served = timed_call(lambda: Connection(path=sock).call())
        print(f"  {side.name}: {BRIDGE_FLOOD} idle on the bridge's socket: harness threads "
              f"{before} -> {during}; the next call: {served}")  # fmt: skip
        for conn in held:
            conn.close()
        time.sleep(0.5)
        with forwarding(side.forwarder, sock) as (port, process):
            before = threads()
            held = [socket.create_connection(("127.0.0.1", port)) for _ in range(FORWARDER_FLOOD)]
            time.sleep(1.0)
            during, relay = threads(), threads(process.pid)
            served = timed_call(lambda: Connection(port).call())
            print(f"  {side.name}: {FORWARDER_FLOOD} idle on the forwarder's port: harness "
                  f"threads {before} -> {during}, forwarder threads {relay}; the next call: "
                  f"{served}")  # fmt: skip
            for conn in held:
                conn.close()
        bridge.close()


def timed_call(call: Any) -> str:
    start = time.perf_counter()
    result: list[str] = []

    def run() -> None:
        try:
            call()
            result.append(f"served in {1000 * (time.perf_counter() - start):.1f} ms")
        except Exception as exc:  # noqa: BLE001 -- reported, not raised
            result.append(f"failed ({type(exc).__name__})")

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(30)
    return result[0] if result else "no answer in 30 s"


def huge(side: Side, model: Any, timeout: float) -> None:
    """A 50 MB body through the forwarder, five times: its 413, then EOF?"""
    with tempfile.TemporaryDirectory() as tmp:
        bridge = side.module.Bridge(model)
        sock = bridge.start_unix(Path(tmp) / "sock")
        outcomes = []
        with forwarding(side.forwarder, sock) as (port, _):
            for _ in range(5):
                outcomes.append(post_huge(port, timeout))
        bridge.close()
    good = sum(1 for o in outcomes if o.startswith("413 + EOF"))
    print(f"  {side.name}: a 50 MB body through the forwarder: 413 and EOF in {good} of 5 "
          f"({'; '.join(outcomes)})")  # fmt: skip


def post_huge(port: int, timeout: float) -> str:
    """As an agent's client sends one (httpx, http.client): the whole body, then the answer."""
    conn = socket.create_connection(("127.0.0.1", port))
    head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % HUGE
    start = time.perf_counter()
    conn.settimeout(timeout)
    answer, ended = b"", "EOF"
    try:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # answered: read it
            conn.sendall(head + b"x" * HUGE)
        while chunk := conn.recv(65536):
            answer += chunk
    except TimeoutError:
        ended = f"no EOF in {timeout:g} s"
    except OSError as exc:
        ended = type(exc).__name__
    finally:
        conn.close()
    status = answer[9:12].decode() or "nothing"
    return f"{status} + {ended} ({time.perf_counter() - start:.2f} s)"


def main() -> None:
    from pytest_toolpolicy.agents import bridge as current
    from pytest_toolpolicy.models.openai_model import OpenAIModel
    from pytest_toolpolicy.models.prices import load_prices

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--before", type=Path, help="an earlier bridge.py, measured beside this one")
    ap.add_argument("--before-forwarder", type=Path, help="an earlier forwarder.py (default: this)")
    ap.add_argument("--huge-timeout", type=float, default=10.0)
    ns = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 8192)), hard))
    endpoint = ThreadingHTTPServer(("127.0.0.1", 0), Endpoint)
    threading.Thread(target=endpoint.serve_forever, daemon=True).start()
    port = endpoint.server_address[1]
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench")
    os.environ.setdefault("TOOLPOLICY_PRICES", _local_price())
    model = OpenAIModel("m", base_url=f"http://127.0.0.1:{port}/v1", prices=load_prices(),
                        max_retries=0)  # fmt: skip
    sides = []
    if ns.before:
        sides.append(Side("before", load_bridge(ns.before, "bridge_before"),
                          ns.before_forwarder or HERE / "forwarder.py"))  # fmt: skip
    sides.append(Side("after", current, HERE / "forwarder.py"))
    overhead(sides, port, model, ns.calls, ns.rounds)
    print("connections held idle (threads counted in /proc/<pid>/task)")
    for side in sides:
        flood(side, model)
    print("a refused body too large for the bridge to drain")
    for side in sides:
        huge(side, model, ns.huge_timeout)


def _local_price() -> str:
    """A price file naming the benchmark's model a local server (no warning, cost $0)."""
    path = Path(tempfile.mkdtemp()) / "prices.toml"
    path.write_text('[models."m"]\nlocal = true\n')
    return str(path)


if __name__ == "__main__":
    main()
