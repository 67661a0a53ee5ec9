"""``toolpolicy primitive --workspace DIR REQUEST``: one primitive, its envelope as JSON."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .. import jsonsafe
from .errors import UsageError


def add_parser(sub: Any) -> None:
    prim = sub.add_parser("primitive", help="run one primitive and print its envelope as JSON")
    prim.add_argument("--workspace", required=True, help="the workspace directory")
    prim.add_argument("request", help='{"tool": NAME, "args": {...}} as JSON, or - for stdin')
    prim.set_defaults(func=_primitive)


def _parse_request(text: str) -> tuple[str, dict[str, Any]]:
    """``{"tool": NAME, "args": {...}}`` (``-``: read from stdin) as the tool and its args."""
    if text == "-":
        text = sys.stdin.read()
    try:
        request = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"request is not valid JSON: {exc}") from None
    except RecursionError:
        raise UsageError("request is nested too deep to read") from None
    if not isinstance(request, dict) or not isinstance(request.get("tool"), str):
        raise UsageError('request must be a JSON object like {"tool": NAME, "args": {...}}')
    return request["tool"], request.get("args", {})


def _primitive(ns: argparse.Namespace) -> int:
    from ..primitives import PrimitiveError, Toolbox

    tool, args = _parse_request(ns.request)
    try:
        box = Toolbox(ns.workspace)
    except PrimitiveError as exc:
        raise UsageError(str(exc)) from None
    print(jsonsafe.dumps(box.call(tool, args), indent=2))
    return 0
