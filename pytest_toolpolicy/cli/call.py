"""``toolpolicy call --workspace DIR REPLY``: one model reply through validation, execution and
the trust gate (``policy/step.py``), the ledgers kept between calls in ``--ledger``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .. import jsonsafe
from .errors import UsageError


def add_parser(sub: Any) -> None:
    call = sub.add_parser(
        "call", help="run one model reply through validation, execution and the trust gate"
    )
    call.add_argument("--workspace", required=True, help="the workspace directory")
    call.add_argument("--ledger", help="a JSON file keeping the ledgers between calls")
    call.add_argument(
        "reply", help='the model\'s reply, e.g. {"tool": ..., "args": {...}}; - for stdin'
    )
    call.set_defaults(func=_call)


def _call(ns: argparse.Namespace) -> int:
    from ..paths import write_atomic
    from ..policy.config import PolicyConfig
    from ..policy.ledger import Ledger
    from ..policy.step import step
    from ..primitives import PrimitiveError, Toolbox, Workspace, WorkspaceError

    reply = sys.stdin.read() if ns.reply == "-" else ns.reply
    try:
        root = Path(ns.workspace)
        workspace = Workspace(root) if (root / ".git").exists() else None
        box = Toolbox(root, workspace=workspace)
        config = PolicyConfig.from_env()
    except (PrimitiveError, WorkspaceError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    ledger = Ledger()
    ledger_path = Path(ns.ledger) if ns.ledger else None
    if ledger_path and ledger_path.exists():
        try:
            ledger = Ledger.from_dict(json.loads(ledger_path.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
            raise UsageError(f"cannot read ledger {ledger_path}: {exc}") from None
    elif ledger_path and not ledger_path.parent.is_dir():
        raise UsageError(f"cannot write ledger {ledger_path}: no directory {ledger_path.parent}")
    result, ledger = step(reply, box, ledger, config)
    if ledger_path:
        # Written whole or not at all: an interrupted call never leaves half a ledger.
        text = jsonsafe.dumps(ledger.to_dict())
        write_atomic(ledger_path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    print(jsonsafe.dumps(result, indent=2))
    return 0
