"""execnet socket servers standing in for other machines: each runs in a directory of its own,
with a cache of its own, and in a mount namespace where the controller's directory is an empty
tmpfs, so it shares neither the controller's report directory nor its caches (the loopback is
the only thing they have in common)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import execnet

SERVER = Path(execnet.__file__).parent / "script" / "socketserver.py"
LISTENING = re.compile(r"Entering Accept loop \('127\.0\.0\.1', (\d+)\)")


@contextmanager
def socket_workers(root: Path, hidden: Path, count: int = 2) -> Iterator[list[str]]:
    """``count`` servers under ``root/w<N>``, ``hidden`` (the controller's directory) out of
    their sight; yields their ``--tx`` specs."""
    servers: list[subprocess.Popen[str]] = []
    try:
        specs = []
        for n in range(1, count + 1):
            home = root / f"w{n}"
            home.mkdir()
            script = (
                f'mount -t tmpfs tmpfs "{hidden}" && exec "{sys.executable}" "{SERVER}" 127.0.0.1:0'
            )
            env = {**os.environ, "TOOLPOLICY_CACHE_DIR": str(home / "cache")}
            server = subprocess.Popen(
                ["unshare", "--mount", "sh", "-c", script],
                cwd=home, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            )  # fmt: skip
            servers.append(server)
            specs.append(f"socket=127.0.0.1:{_port(server)}")
        yield specs
    finally:
        for server in servers:
            server.kill()
            server.wait(timeout=10)


def _port(server: subprocess.Popen[str]) -> int:
    assert server.stdout is not None
    deadline = time.monotonic() + 30
    seen = []
    while time.monotonic() < deadline:
        line = server.stdout.readline()
        if not line:
            break
        seen.append(line)
        if match := LISTENING.search(line):
            return int(match[1])
    raise AssertionError(f"the socket server did not start: {''.join(seen)}")
