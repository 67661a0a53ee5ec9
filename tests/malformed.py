"""Files as a crash or a careless edit leaves them, for the tests of each command's bad input:
good records with one of the wrong shape among them and a last line cut short."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_malformed(path: Path, good: list[dict[str, Any]], wrong: dict[str, Any]) -> str:
    """``path`` holding ``good[0]``, ``wrong`` (line 2), the rest of ``good``, and the first
    40 characters of ``good[0]`` as a last line without its end. The torn line's number."""
    lines = [json.dumps(good[0]), json.dumps(wrong), *(json.dumps(g) for g in good[1:])]
    path.write_text("\n".join(lines) + "\n" + json.dumps(good[0])[:40], encoding="utf-8")
    return str(len(lines) + 1)


def one_line(err: str) -> str:
    """stderr, asserted to be one line and no traceback."""
    assert "Traceback" not in err and err.count("\n") == 1 and err.endswith("\n"), err
    return err.rstrip("\n")
