"""A short tour of the six primitives on a bundled example repository (``memstore``)."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..primitives import Envelope, Toolbox, Workspace

EXAMPLE = Path(__file__).parent / "memstore"

STEPS: list[tuple[str, str, dict[str, Any]]] = [
    ("find the store's API by name", "search_symbol", {"query": "MemStore.recall"}),
    ("find code by what it does", "search_code", {"query": "values that expire after a time"}),
    (
        "read the entity",
        "read_entity",
        {"selector": "memstore.store.MemStore.recall", "body": True},
    ),
    (
        "run the failing test",
        "run_test",
        {"target": "tests/test_store.py::test_expired_value_is_gone"},
    ),
    (
        "fix the off-by-one at the expiry boundary",
        "edit_entity",
        {
            "selector": "memstore.store.MemStore.recall",
            "search": "self._clock() > expires",
            "replace": "self._clock() >= expires",
        },
    ),
    (
        "the lint gate refuses a broken edit",
        "edit_entity",
        {
            "selector": "memstore.store.MemStore.forget",
            "search": "self._items.pop(key, None)",
            "replace": "self._items.pop(key, missing)",
        },
    ),
    ("rerun the test", "run_test", {"target": "tests/test_store.py::test_expired_value_is_gone"}),
    ("compute in the sandbox", "execute", {"code": "import socket\nprint(socket.if_nameindex())"}),
]


def _brief(envelope: Envelope) -> str:
    if not envelope["ok"]:
        return f"ok=false error={envelope['error']!r}"
    data = envelope["data"]
    keys = ("passed", "exit_code", "ranker", "committed", "stdout", "sandbox")
    shown = {k: data[k] for k in keys if k in data}
    if isinstance(data.get("matches"), list):
        shown["matches"] = [m["selector"] for m in data["matches"][:3]]
    if data.get("entity"):
        shown["entity"] = data["entity"]["signature"]
    return "ok=true " + json.dumps(shown)


def run(echo: Callable[[str], None] = print) -> int:
    with tempfile.TemporaryDirectory(prefix="toolpolicy-demo-") as tmp:
        root = Path(tmp) / "memstore"
        shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("__pycache__"))
        workspace = Workspace.create(root)
        box = Toolbox(root)
        echo(f"workspace: {root} ({len(box.index)} entities indexed; sandbox: {box.sandbox.mode})")
        for i, (why, tool, args) in enumerate(STEPS, 1):
            echo(f"{i}. {why}: {tool} {json.dumps(args)[:90]}")
            echo(f"   -> {_brief(box.call(tool, args))}")
        echo("patch against the base commit:")
        echo(workspace.patch().rstrip())
    return 0
