"""One local server for a whole session: started by the process that owns the session (the
xdist controller, or a lone pytest or ``toolpolicy run``), its address handed to every worker
through the environment they inherit, stopped when the session ends."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from .model import URL_ENV
from .server import LocalServer, ServerSettings
from .weights import resolve


def start_server(arg: str, settings: ServerSettings | None = None) -> LocalServer:
    """The running server for ``local:<arg>``; its URL is in ``TOOLPOLICY_LOCAL_URL``."""
    server = LocalServer(resolve(arg), settings).start()
    os.environ[URL_ENV] = server.base_url
    return server


def stop_server(server: LocalServer) -> None:
    server.stop()
    os.environ.pop(URL_ENV, None)


@contextmanager
def served(
    model: str | None, base_url: str | None = None, settings: ServerSettings | None = None
) -> Iterator[LocalServer | None]:
    """The server for ``model`` while the block runs, when it is a ``local:`` one and no server
    is named already (``base_url``, or an inherited ``TOOLPOLICY_LOCAL_URL``); else nothing."""
    if not model or not model.startswith("local:") or base_url or os.environ.get(URL_ENV):
        yield None
        return
    server = start_server(model.partition(":")[2], settings)
    try:
        yield server
    finally:
        stop_server(server)
