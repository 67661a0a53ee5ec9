"""Serve a built site on the loopback: ``toolpolicy view DIR --serve``.

Only 127.0.0.1 (the site shows prompts and code from the runs); only files under the site's own
directory (``SimpleHTTPRequestHandler`` with ``directory=``), no directory listings.
"""

from __future__ import annotations

import functools
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HOST = "127.0.0.1"


class _Handler(SimpleHTTPRequestHandler):
    def list_directory(self, path: Any) -> None:
        self.send_error(404, "no listing")
        return None

    def log_message(self, format: str, *args: Any) -> None:  # one request a line is noise here
        pass


def server(site: Path, port: int = 0) -> ThreadingHTTPServer:
    """A server for ``site`` on 127.0.0.1:``port`` (0: any free port); the caller runs
    ``serve_forever`` and reads the port from ``server_address``."""
    handler = functools.partial(_Handler, directory=str(site))
    return ThreadingHTTPServer((HOST, port), handler)
