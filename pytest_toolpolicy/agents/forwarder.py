"""Inside the sandbox: the agent's one reachable address, and the agent under it.

``python forwarder.py SOCKET PORT -- COMMAND...`` listens on 127.0.0.1:PORT of the sandbox's
own network namespace (nothing else is reachable there: the namespace has only its loopback),
relays every connection to the bridge's Unix socket ``SOCKET`` (bound into the sandbox), runs
COMMAND with the listener ready, and exits with COMMAND's status. Standard library only: it is
copied out of the package and run by the sandbox's interpreter, importing nothing of the
harness.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for s in (source, sink):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)


def _relay(client: socket.socket, path: str) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        upstream.close()
        return
    threading.Thread(target=_pipe, args=(upstream, client), daemon=True).start()
    _pipe(client, upstream)


def _serve(listener: socket.socket, path: str) -> None:
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no 40 ms delayed ACKs
        threading.Thread(target=_relay, args=(client, path), daemon=True).start()


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        print("usage: forwarder.py SOCKET PORT -- COMMAND...", file=sys.stderr)
        return 2
    path, port, command = argv[0], int(argv[1]), argv[3:]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(16)
    threading.Thread(target=_serve, args=(listener, path), daemon=True).start()
    # The agent's own process group is the sandbox's: a timeout kills it with everything.
    # The side channel's descriptor, where an observable agent reports its steps: kept open
    # for the agent (subprocess closes every other descriptor).
    channel = os.environ.get("TOOLPOLICY_CHANNEL_FD", "")
    keep = (int(channel),) if channel.isdigit() else ()
    return subprocess.call(command, env=os.environ.copy(), pass_fds=keep)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
