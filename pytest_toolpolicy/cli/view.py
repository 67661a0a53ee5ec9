"""``toolpolicy view REPORT_DIR``: build the viewer's site (``view/``), and with ``--serve``
serve it on the loopback until interrupted."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .errors import UsageError


def add_parser(sub: Any) -> None:
    view = sub.add_parser(
        "view", help="build (and with --serve, serve) a browsable site from an A/B report"
    )
    view.add_argument("report", type=Path, help="the report directory an A/B session wrote")
    view.add_argument("--out", type=Path, help="where to write the site (default REPORT/view)")
    view.add_argument(
        "--serve", action="store_true", help="serve the site on 127.0.0.1 until interrupted"
    )
    view.add_argument("--port", type=int, default=8765, help="the port to serve on (default 8765)")
    view.set_defaults(func=_view)


def _view(ns: argparse.Namespace) -> int:
    from ..view import ReportError, SiteError, build_site

    try:
        site = build_site(ns.report, ns.out)
    except (ReportError, SiteError) as exc:
        raise UsageError(str(exc), "view") from None
    for note in site.notes:
        print(f"toolpolicy view: {note}", file=sys.stderr)
    print(f"{site.index} ({site.pages} pages, {site.bytes / 1e6:.1f} MB, {site.seconds:.1f} s)")
    if not ns.serve:
        return 0
    from ..view.serve import server

    try:
        httpd = server(site.index.parent, ns.port)
    except OSError as exc:
        raise UsageError(f"cannot serve on 127.0.0.1:{ns.port}: {exc}", "view") from None
    host, port = httpd.server_address[:2]
    print(f"serving http://{host!s}:{port}/index.html (Ctrl-C stops)", flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()
    return 0
