"""Starting a ``local:`` model's server, waiting for it to be healthy, and stopping it.

The server is a child process (``serve.py``) whose life is tied to a pipe this process holds:
``stop()`` closes it, and so does this process's exit, however it ends, so no server outlives
the session. Its log goes to a file beside the model cache, named in every error.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from ...paths import cache_dir
from .weights import Weights


class ServerError(RuntimeError):
    """The server did not come up; the message names why and where its log is."""


@dataclass(frozen=True)
class ServerSettings:
    threads: int = 1  # 2 are several times slower on a 2-core machine with anything else running
    ctx: int = 8192  # per slot
    # Requests served at once, each in a slot of its own with the whole ``ctx``: with one slot,
    # xdist workers queue; with one per worker, their replies are generated in one batch
    # (benchmarks/bench_local_slots.py measures what that buys on 1 thread).
    parallel: int = 1
    # A llama.cpp built-in name ("gemma", "chatml", ...), a Jinja source, or "jinja" (the file's
    # own template by the Jinja engine); None: the model's own (gemma's is "gemma", Qwen's
    # "jinja"), else what the GGUF file carries.
    chat_template: str | None = None
    start_timeout_s: float = 120.0
    # Serve pooled hidden states (``/v1/embeddings``, the last token's) instead of completions:
    # llama.cpp's server does one or the other. Row 10's probe reads a prompt's this way.
    embedding: bool = False


class LocalServer:
    """``with LocalServer(weights) as server: server.base_url``."""

    def __init__(self, weights: Weights, settings: ServerSettings | None = None) -> None:
        self.weights = weights
        self.settings = settings or ServerSettings()
        self.address: str | None = None
        self.log_path: Path | None = None
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        if self.address is None:
            raise ServerError("the local server is not running")
        return f"{self.address}/v1"

    def start(self) -> LocalServer:
        logs = cache_dir() / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix="llama-server-", suffix=".log", dir=logs)
        self.log_path = Path(name)
        config = {
            "model": str(self.weights.path),
            "ctx": self.settings.ctx,
            "threads": self.settings.threads,
            "parallel": self.settings.parallel,
            "chat_template": self.settings.chat_template or self.weights.chat_template,
            "embedding": self.settings.embedding,
        }
        argv = [sys.executable, "-m", "pytest_toolpolicy.models.local.serve", json.dumps(config)]
        try:
            self._proc = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=fd,
                start_new_session=True,  # a Ctrl-C reaches the harness, which then stops it
            )  # fmt: skip
        finally:
            os.close(fd)
        deadline = time.monotonic() + self.settings.start_timeout_s
        try:
            self.address = self._read_address(deadline)
            self._wait_healthy(deadline)
        except BaseException:
            self.stop()
            raise
        return self

    def _read_address(self, deadline: float) -> str:
        assert self._proc is not None and self._proc.stdout is not None
        # The first stdout line is the child's report; model loading happens before it.
        line = _readline_by(self._proc, deadline)
        try:
            report = json.loads(line)
        except ValueError:
            report = {}
        if "address" in report:
            return str(report["address"])
        if report.get("error"):
            why = str(report["error"])
        elif line:
            why = f"it said {line[:200]!r}"
        else:
            why = f"it exited with status {self._proc.poll()}"
        raise ServerError(
            f"local:{self.weights.name}: the server did not start: {why} (log: {self.log_path})"
        )

    def _wait_healthy(self, deadline: float) -> None:
        while True:
            try:
                with urllib.request.urlopen(f"{self.address}/health", timeout=2) as reply:
                    if reply.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline or (self._proc and self._proc.poll() is not None):
                raise ServerError(
                    f"local:{self.weights.name}: the server at {self.address} never became"
                    f" healthy within {self.settings.start_timeout_s:.0f} s (log: {self.log_path})"
                )
            time.sleep(0.2)

    def stop(self, grace_s: float = 10.0) -> None:
        proc, self._proc, self.address = self._proc, None, None
        if proc is None:
            return
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()  # the server's cue to exit
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def _readline_by(proc: subprocess.Popen[bytes], deadline: float) -> bytes:
    """One line of the child's stdout, or b"" once it exits or the deadline passes."""
    assert proc.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        buffer = b""
        while time.monotonic() < deadline:
            if not sel.select(timeout=0.5):
                if proc.poll() is not None:
                    return buffer
                continue
            chunk = os.read(proc.stdout.fileno(), 4096)
            if not chunk:
                return buffer
            buffer += chunk
            if b"\n" in buffer:
                return buffer.split(b"\n", 1)[0]
    return buffer
