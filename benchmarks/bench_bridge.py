"""The bridge's overhead per model call, side by side in one run: an agent's client calling a
loopback OpenAI-compatible endpoint directly, then through the bridge (the bridge's
``OpenAIModel`` calling that same endpoint), then through the path a sandboxed agent takes
(the in-sandbox forwarder, here a host process, relaying to the bridge's Unix socket). The
endpoint answers at once, so what is measured is the added hops. Prints p50/p90 per path and
the added p50; not a test.

    .venv/bin/python benchmarks/bench_bridge.py [--calls 400]

Target (issue 31): bridge overhead per model call <= 2 ms p50.
"""

from __future__ import annotations

import argparse
import http.client
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPLY = json.dumps({
    "id": "x", "object": "chat.completion", "created": 0, "model": "m",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"},
                 "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
}).encode()  # fmt: skip
BODY = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi " * 200}]})


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


def timed(port: int, calls: int) -> list[float]:
    """Seconds per call of a keep-alive client, as an agent's SDK sends them."""
    conn = http.client.HTTPConnection("127.0.0.1", port)
    conn.connect()
    conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as httpx does
    out = []
    for _ in range(calls):
        start = time.perf_counter()
        conn.request("POST", "/v1/chat/completions", BODY, {"Content-Type": "application/json"})
        response = conn.getresponse()
        response.read()
        out.append(time.perf_counter() - start)
        assert response.status == 200, response.status
    conn.close()
    return out


def model_alone(model: object, calls: int) -> list[float]:
    """Seconds per ``model.complete``: the hop the bridge makes to the endpoint, by itself."""
    from pytest_toolpolicy.models.base import ModelRequest

    request = ModelRequest(messages=({"role": "user", "content": "hi " * 200},))
    out = []
    for _ in range(calls):
        start = time.perf_counter()
        model.complete(request)  # type: ignore[attr-defined]
        out.append(time.perf_counter() - start)
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    from pytest_toolpolicy.agents.bridge import Bridge
    from pytest_toolpolicy.models.openai_model import OpenAIModel
    from pytest_toolpolicy.models.prices import load_prices

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=400)
    ns = ap.parse_args()
    endpoint = ThreadingHTTPServer(("127.0.0.1", 0), Endpoint)
    threading.Thread(target=endpoint.serve_forever, daemon=True).start()
    port = endpoint.server_address[1]
    import os

    os.environ.setdefault("OPENAI_API_KEY", "sk-bench")
    os.environ.setdefault("TOOLPOLICY_PRICES", _local_price())
    model = OpenAIModel("m", base_url=f"http://127.0.0.1:{port}/v1", prices=load_prices(),
                        max_retries=0)  # fmt: skip
    bridge = Bridge(model)
    bridge_port = int(bridge.start_tcp().rsplit(":", 1)[1].split("/")[0])
    with tempfile.TemporaryDirectory() as tmp:
        sock = bridge_unix = Path(tmp) / "sock"
        unix = Bridge(model)
        unix.start_unix(bridge_unix)
        fwd_port = free_port()
        here = Path(__file__).resolve().parents[1] / "pytest_toolpolicy" / "agents" / "forwarder.py"
        forwarder = subprocess.Popen(
            [sys.executable, str(here), str(sock), str(fwd_port), "--", "sleep", "3600"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        time.sleep(0.5)
        try:
            paths = {"direct": port, "bridge (loopback TCP)": bridge_port,
                     "forwarder + bridge (Unix socket)": fwd_port}  # fmt: skip
            for p in paths.values():
                timed(p, 20)  # warm up: the client, the SDK's connection pool
            results = {name: timed(p, ns.calls) for name, p in paths.items()}
            results["the session's model client alone"] = model_alone(model, ns.calls)
        finally:
            os.killpg(forwarder.pid, 9)  # the forwarder and its sleeping child
            unix.close()
    bridge.close()
    base = statistics.median(results["direct"])
    alone = statistics.median(results.pop("the session's model client alone"))
    print(f"{ns.calls} calls per path, one keep-alive client, endpoint answering at once")
    for name, times in results.items():
        p50 = statistics.median(times)
        p90 = statistics.quantiles(times, n=10)[-1]
        added = "" if name == "direct" else f"  added p50 {1000 * (p50 - base):.2f} ms"
        print(f"  {name:34s} p50 {1000 * p50:.2f} ms  p90 {1000 * p90:.2f} ms{added}")
    bridged = statistics.median(results["bridge (loopback TCP)"])
    print(f"  the session's model client alone (openai SDK, model.complete): p50 "
          f"{1000 * alone:.2f} ms; the bridge's own hop: {1000 * (bridged - alone):.2f} ms")  # fmt: skip
    # every bridged call's tokens are the endpoint's report, exactly
    served = bridge.served()
    assert all(e.completion and e.completion.usage.total_tokens == 11 for e in served)
    print(f"bridge tokens: {bridge.tokens} over {len(served)} calls (endpoint: 11 a call)")


def _local_price() -> str:
    """A price file naming the benchmark's model a local server (no warning, cost $0)."""
    path = Path(tempfile.mkdtemp()) / "prices.toml"
    path.write_text('[models."m"]\nlocal = true\n')
    return str(path)


if __name__ == "__main__":
    main()
