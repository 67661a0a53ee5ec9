"""Inside the sandbox: the agent's one reachable address, and the agent under it.

``python forwarder.py SOCKET PORT -- COMMAND...`` listens on 127.0.0.1:PORT of the sandbox's
own network namespace (nothing else is reachable there: the namespace has only its loopback),
relays every connection to the bridge's Unix socket ``SOCKET`` (bound into the sandbox), runs
COMMAND with the listener ready, and exits with COMMAND's status. Standard library only, and
Python 3.8's syntax: it is copied out of the package and run by the sandbox's interpreter (the
agent's ``Launch.python``), importing nothing of the harness.

One selectors loop on one thread relays every connection. (A thread per connection made the
sandbox's task limit a limit on connections: at about 128 a thread failed to start, which ended
the accept loop for good.) At most ``CONNECTIONS`` are relayed at once; past that a newcomer is
accepted and closed at once (a line ending, below, is bounded alike, and does not count). Each side's end is passed on to the other: when the bridge has
answered and closed (a 413 for a body too large, say), the client gets the rest of the answer
and then EOF, while what it still sends is dropped until it stops (``LINGER_S`` after its last
byte, ``LINGER_MAX_S`` at most), so it is not reset before it reads the answer. Nothing a
connection does ends the loop: a fault closes that connection.
"""

from __future__ import annotations

import contextlib
import errno
import os
import selectors
import socket
import subprocess
import sys
import threading
import time

CONNECTIONS = 128  # relayed at once: each holds two of the sandbox's 1024 descriptors
PIECE = 1 << 16  # read at a time
HELD = 1 << 18  # bytes held for one side before reading from the other pauses
CONNECT_S = 2.0  # to reach the bridge's socket
LINGER_S = 1.0  # once the bridge's side ended: the client's bytes dropped until this quiet...
LINGER_MAX_S = 30.0  # ...or this long at most
ACCEPT_PAUSE_S = 0.1  # accepting rests this long when the process is out of descriptors
_OUT_OF_DESCRIPTORS = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)
READ, WRITE = selectors.EVENT_READ, selectors.EVENT_WRITE


class Pair:
    """One relayed connection: the agent's client and its line to the bridge."""

    def __init__(self, client: socket.socket, upstream: socket.socket) -> None:
        self.client = client
        self.upstream = upstream
        self.to_up = bytearray()
        self.to_client = bytearray()
        self.client_eof = False  # the client sent its last byte
        self.up_eof = False  # the bridge sent its last byte (or reset the line)
        self.up_dead = False  # the bridge takes no more: the client's bytes are dropped
        self.up_shut = False  # the bridge was told the client is done
        self.client_shut = False  # the client was told the bridge is done
        self.quiet_at = 0.0  # lingering: closed when the client is quiet past this...
        self.end_at = 0.0  # ...or at this
        self.events = {"client": 0, "up": 0}


class Relay:
    def __init__(self, listener: socket.socket, path: str) -> None:
        self.listener = listener
        self.path = path
        self.selector = selectors.DefaultSelector()
        self.pairs: set[Pair] = set()
        self.lingering: set[Pair] = set()
        self.paused_until: float | None = None
        listener.setblocking(False)
        self.selector.register(listener, READ, None)

    def run(self) -> None:
        while True:
            try:
                self.step()
            except Exception as exc:  # noqa: BLE001 -- the loop outlives any fault of its own
                print(f"forwarder: {type(exc).__name__}: {exc}", file=sys.stderr)
                time.sleep(0.01)

    def step(self) -> None:
        for key, mask in self.selector.select(0.25):
            if key.data is None:
                self.accept()
                continue
            pair, side = key.data
            if pair not in self.pairs:  # closed by an earlier event of this round
                continue
            try:
                self.event(pair, side, mask)
            except OSError:  # the client's line failed: nothing more can reach it
                self.close(pair)
            except Exception as exc:  # noqa: BLE001 -- one connection's fault closes that one
                print(f"forwarder: {type(exc).__name__}: {exc}", file=sys.stderr)
                self.close(pair)
        now = time.monotonic()
        for pair in list(self.lingering):
            if now >= min(pair.quiet_at, pair.end_at):
                self.close(pair)
        if self.paused_until is not None and now >= self.paused_until:
            self.paused_until = None
            self.selector.register(self.listener, READ, None)

    def accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except BlockingIOError:
                return
            except OSError as exc:
                if exc.errno in _OUT_OF_DESCRIPTORS:  # rest, rather than spin on the backlog
                    self.selector.unregister(self.listener)
                    self.paused_until = time.monotonic() + ACCEPT_PAUSE_S
                return
            if len(self.pairs) - len(self.lingering) >= CONNECTIONS:
                client.close()
                continue
            try:
                upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            except OSError:
                client.close()
                continue
            try:
                upstream.settimeout(CONNECT_S)
                upstream.connect(self.path)
                client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no delayed ACKs
            except OSError:
                client.close()
                upstream.close()
                continue
            client.setblocking(False)
            upstream.setblocking(False)
            pair = Pair(client, upstream)
            self.pairs.add(pair)
            self.update(pair)

    def event(self, pair: Pair, side: str, mask: int) -> None:
        """Read what is ready, and send it on at once (waiting for the other side only when
        its buffer is full)."""
        if side == "client":
            if mask & WRITE:
                _send(pair.client, pair.to_client)
            if mask & READ:
                data = _recv(pair.client)
                if data == b"":
                    pair.client_eof = True
                elif data:
                    pair.quiet_at = time.monotonic() + LINGER_S
                    if not pair.up_dead:
                        pair.to_up += data
                        self.push_up(pair)
        else:
            if mask & WRITE:
                self.push_up(pair)
            if mask & READ:
                try:
                    data = _recv(pair.upstream)
                except OSError:  # reset, after what it sent first was read
                    data = b""
                if data == b"":
                    pair.up_eof = True
                elif data:
                    pair.to_client += data
                    _send(pair.client, pair.to_client)
        self.update(pair)

    def push_up(self, pair: Pair) -> None:
        try:
            _send(pair.upstream, pair.to_up)
        except OSError:  # the bridge closed its side: what the client sends is dropped
            pair.up_dead = True
            pair.to_up.clear()

    def update(self, pair: Pair) -> None:
        """Pass each side's end on once what it sent is delivered; then watch what is left."""
        if pair.client_eof and not pair.to_up and not pair.up_shut and not pair.up_dead:
            pair.up_shut = True
            with contextlib.suppress(OSError):
                pair.upstream.shutdown(socket.SHUT_WR)
        if pair.up_eof and not pair.to_client and not pair.client_shut:
            pair.client_shut = True
            pair.client.shutdown(socket.SHUT_WR)
            if len(self.lingering) >= CONNECTIONS:  # ending lines are bounded alike
                self.close(pair)
                return
            now = time.monotonic()
            pair.quiet_at, pair.end_at = now + LINGER_S, now + LINGER_MAX_S
            self.lingering.add(pair)
        if pair.client_shut and pair.client_eof:
            self.close(pair)
            return
        client = READ if not pair.client_eof and (pair.up_dead or len(pair.to_up) < HELD) else 0
        up = READ if not pair.up_eof and len(pair.to_client) < HELD else 0
        self.want(pair, "client", client | (WRITE if pair.to_client else 0))
        self.want(pair, "up", up | (WRITE if pair.to_up and not pair.up_dead else 0))

    def want(self, pair: Pair, side: str, events: int) -> None:
        old = pair.events[side]
        if events == old:
            return
        sock = pair.client if side == "client" else pair.upstream
        if not old:
            self.selector.register(sock, events, (pair, side))
        elif not events:
            self.selector.unregister(sock)
        else:
            self.selector.modify(sock, events, (pair, side))
        pair.events[side] = events

    def close(self, pair: Pair) -> None:
        for side, sock in (("client", pair.client), ("up", pair.upstream)):
            if pair.events[side]:
                with contextlib.suppress(KeyError, ValueError):
                    self.selector.unregister(sock)
                pair.events[side] = 0
            sock.close()
        self.pairs.discard(pair)
        self.lingering.discard(pair)


def _recv(sock: socket.socket) -> bytes | None:
    """What ``sock`` has (b"": its end), or None when nothing yet."""
    try:
        return sock.recv(PIECE)
    except BlockingIOError:
        return None


def _send(sock: socket.socket, pending: bytearray) -> None:
    try:
        sent = sock.send(pending)
    except BlockingIOError:
        return
    del pending[:sent]


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        print("usage: forwarder.py SOCKET PORT -- COMMAND...", file=sys.stderr)
        return 2
    path, port, command = argv[0], int(argv[1]), argv[3:]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(CONNECTIONS)
    relay = Relay(listener, path)
    threading.Thread(target=relay.run, daemon=True, name="forwarder").start()
    # The agent's own process group is the sandbox's: a timeout kills it with everything.
    # The side channel's descriptor, where an observable agent reports its steps: kept open
    # for the agent (subprocess closes every other descriptor).
    channel = os.environ.get("TOOLPOLICY_CHANNEL_FD", "")
    keep = (int(channel),) if channel.isdigit() else ()
    return subprocess.call(command, env=os.environ.copy(), pass_fds=keep)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
