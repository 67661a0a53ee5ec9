"""Bounded capture of a child's stdout/stderr: a 100 MB flood costs the harness at most the cap.

Each stream keeps its first bytes and a short tail (a test run's verdict is printed last), drains
and discards the middle, and counts what it dropped. One ``selectors`` loop in the calling thread
feeds stdin, reads both pipes and asks a ``Tick`` (the workspace's disk watch, ``diskwatch.py``)
whether to stop, so nothing blocks on a full pipe and no thread can be left behind.
"""

from __future__ import annotations

import os
import select
import selectors
import subprocess
import time
from collections.abc import Callable
from typing import IO, Literal

_CHUNK = 1 << 16
_POLL_S = 0.05
# After the main process exits, how long descendants may keep a pipe open before we stop waiting.
_EXIT_GRACE_S = 0.2
_MARKER_ROOM = 64  # bytes of the cap left for the "[... N bytes dropped ...]" line


Outcome = Literal["eof", "exited", "deadline", "stopped"]
# Asked on every turn of the pump loop with the current time; True stops the run.
Tick = Callable[[float], bool]


def has_exited(pid: int) -> bool:
    """Whether child ``pid`` has exited, without reaping it: while it is an unreaped zombie its
    pid, and so its process group id, cannot be reused, so killing that group stays safe."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:  # already reaped
        return True


class CappedBuffer:
    """The first and the last ``tail`` bytes of a stream, at most ``cap`` in all, and the count
    of bytes dropped between them."""

    def __init__(self, cap: int, tail: int = 0) -> None:
        if cap < 0 or tail < 0:
            raise ValueError(f"caps cannot be negative, got cap={cap} tail={tail}")
        room = min(_MARKER_ROOM, cap // 4)
        self._cap = cap
        self._tail_cap = min(tail, cap - room)
        self._head_cap = cap - self._tail_cap - room
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self._head_cap - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if chunk and self._tail_cap:
            self._tail += chunk[-self._tail_cap :]
            excess = len(self._tail) - self._tail_cap
            if excess > 0:
                del self._tail[:excess]

    @property
    def dropped(self) -> int:
        return self.total - len(self._head) - len(self._tail)

    def getvalue(self) -> bytes:
        """Head and tail (never more than ``cap`` bytes); when bytes were dropped between them,
        a marker line says how many."""
        marker = f"\n[... {self.dropped} bytes dropped ...]\n".encode() if self.dropped else b""
        if len(self._head) + len(marker) + len(self._tail) > self._cap:
            marker = b""
        return bytes(self._head) + marker + bytes(self._tail)


class Pump:
    """Feeds a child's stdin and reads its stdout/stderr into capped buffers, and a side
    channel (a pipe of the caller's, whose write end the child holds) into another."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        stdin: bytes | None,
        cap: int,
        tail: int = 0,
        channel: IO[bytes] | None = None,
        channel_cap: int = 0,
    ) -> None:
        self.proc = proc
        self.stdout = CappedBuffer(cap, tail)
        self.stderr = CappedBuffer(cap, tail)
        # Records, not prose: kept from the start only, so a cut never splits one in the middle.
        self.channel = CappedBuffer(channel_cap)
        self._stdin = memoryview(stdin or b"")
        self._sel = selectors.DefaultSelector()
        self._pipes: dict[int, IO[bytes]] = {}  # the registered pipes, by file descriptor
        self._exited_at: float | None = None
        pipes = ((proc.stdout, self.stdout), (proc.stderr, self.stderr), (channel, self.channel))
        for pipe, buf in pipes:
            if pipe is not None:
                self._register(pipe, selectors.EVENT_READ, buf)
        if proc.stdin is not None:
            self._register(proc.stdin, selectors.EVENT_WRITE, None)

    def run(self, deadline: float, tick: Tick | None = None) -> Outcome:
        """Pump until every output pipe is at EOF and the main process has exited ("eof"), or
        it has exited while descendants still hold a pipe ("exited"), or ``deadline`` (a
        ``time.monotonic()`` value) passes, or ``tick`` says stop."""
        while self._reading():
            now = time.monotonic()
            if now >= deadline:
                return "deadline"
            if tick is not None and tick(now):
                return "stopped"
            if has_exited(self.proc.pid):
                self._exited_at = self._exited_at or now
                if now - self._exited_at > _EXIT_GRACE_S:
                    return "exited"
            for key, _ in self._sel.select(min(deadline - now, _POLL_S)):
                if key.data is None:
                    self._write(self._pipes[key.fd])
                else:
                    self._read(self._pipes[key.fd], key.data)
        return self._await_exit(deadline, tick)

    def _await_exit(self, deadline: float, tick: Tick | None) -> Outcome:
        """Pipes close a moment before their process is gone (killing it then would turn a
        clean exit into a SIGKILL), and a process may close them early and run on: it still
        runs under the deadline and the tick. A pidfd wakes the harness the moment the process
        exits (a poll's overshoot, under load, cost each run ~10 ms); polling where there is
        none."""
        pidfd = _pidfd(self.proc.pid)
        pause = 0.0005
        try:
            while not has_exited(self.proc.pid):
                now = time.monotonic()
                if now >= deadline:
                    return "deadline"
                if tick is not None and tick(now):
                    return "stopped"
                if pidfd is not None:
                    select.select([pidfd], [], [], min(_POLL_S, deadline - now))
                else:
                    time.sleep(min(pause, deadline - now))
                    pause = min(pause * 2, _POLL_S)
            return "eof"
        finally:
            if pidfd is not None:
                os.close(pidfd)

    def close(self) -> None:
        for key in list(self._sel.get_map().values()):
            self._unregister(self._pipes[key.fd])
        self._sel.close()

    def _reading(self) -> bool:
        return any(key.data is not None for key in self._sel.get_map().values())

    def _read(self, pipe: IO[bytes], buf: CappedBuffer) -> None:
        try:
            chunk = os.read(pipe.fileno(), _CHUNK)
        except BlockingIOError:
            return
        if chunk:
            buf.feed(chunk)
        else:
            self._unregister(pipe)

    def _write(self, pipe: IO[bytes]) -> None:
        try:
            written = os.write(pipe.fileno(), self._stdin[:_CHUNK])
        except BlockingIOError:
            return
        except OSError:  # the child closed its stdin (EPIPE): it reads no more
            written = len(self._stdin)
        self._stdin = self._stdin[written:]
        if not self._stdin:
            self._unregister(pipe)

    def _register(self, pipe: IO[bytes], events: int, buf: CappedBuffer | None) -> None:
        os.set_blocking(pipe.fileno(), False)
        self._sel.register(pipe, events, buf)
        self._pipes[pipe.fileno()] = pipe

    def _unregister(self, pipe: IO[bytes]) -> None:
        self._pipes.pop(self._sel.unregister(pipe).fd, None)
        pipe.close()


def _pidfd(pid: int) -> int | None:
    """A file descriptor that becomes readable when ``pid`` exits (Linux 5.3+), or None."""
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        return int(opener(pid))
    except OSError:
        return None
