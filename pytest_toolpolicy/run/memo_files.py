"""What a memo entry holds of the files a call changed, and how it writes them back: never through
a link. A changed path is captured with ``lstat`` (a link as its target string, never what it
points to) and written back through ``safefs``, which replaces a link at the path instead of
writing through it; a change that cannot be captured so (a directory, a FIFO, a file over the
read limit) is not memoized (``memo.py``).
"""

from __future__ import annotations

import base64
import os
import stat
from pathlib import Path
from typing import Any

from .. import limits
from ..primitives import safefs
from ..primitives.envelope import PrimitiveError
from ..primitives.toolbox import Toolbox

# A changed path as captured: None (deleted), {"mode", "text" | "base64"} (a regular file) or
# {"link": target} (a symbolic link, its target as a string).
Change = dict[str, Any] | None


def changed_files(toolbox: Toolbox, before: str, after: str) -> dict[str, Change] | None:
    """The paths that differ between two trees as they are now; None when one cannot be
    captured without following a link or holding too much: then the call is not stored."""
    workspace = toolbox.workspace
    assert workspace is not None
    budget = limits.current().read_bytes  # for the entry's files together, as for one read
    out: dict[str, Change] = {}
    for rel in workspace.changed_between(before, after):
        try:
            out[rel], size = capture(toolbox.root, rel, budget)
        except (PrimitiveError, OSError, UnicodeDecodeError):
            return None  # a link on the way, a FIFO or directory, over the limit, ...
        budget -= size
    return out


def capture(root: Path, rel: str, limit: int) -> tuple[Change, int]:
    path = safefs.inside(root, rel, final_link_ok=True)  # a parent that is a link raises
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None, 0
    if stat.S_ISLNK(info.st_mode):
        target = os.fsencode(os.readlink(path)).decode("utf-8")  # strict: it must replay as is
        return {"link": target}, len(target)
    # Not a regular file (a directory where the tree had a file, a FIFO): raises, not stored.
    data = safefs.read_bytes(root, rel, limit)
    try:
        body = {"text": data.decode("utf-8")}
    except UnicodeDecodeError:
        body = {"base64": base64.b64encode(data).decode("ascii")}
    return {"mode": stat.S_IMODE(info.st_mode), **body}, len(data)


def apply_change(root: Path, rel: str, change: Change) -> None:
    """Put ``change`` at ``rel``, replacing (never writing through) whatever is there."""
    if change is None:
        safefs.remove(root, rel)
    elif "link" in change:
        safefs.remove(root, rel)
        # A placeholder written by safefs makes the missing parents (refusing a link on the
        # way); the link then takes its place. Making a link is harmless: it is never followed.
        path = safefs.write_bytes(root, rel, b"")
        os.unlink(path)
        os.symlink(change["link"], path)
    else:
        text = change.get("text")
        data = text.encode("utf-8") if text is not None else base64.b64decode(change["base64"])
        safefs.write_bytes(root, rel, data, change["mode"])
