"""The object stores a workspace borrows, for the sandbox to show its runs.

An item's workspace is a ``git clone --shared`` of a cached checkout: its ``.git`` holds refs
and the commits made since, and reads every other object through ``objects/info/alternates``
from the checkout's ``.git/objects``. A sandboxed run sees the workspace but not the cache, so
git inside it cannot read the base commit: xarray's versioneer (``git rev-list --count HEAD``
at import) then crashes every test module. The store is shown read-only at its own path.

The alternates file is inside the workspace, which the agent writes, so it names nothing the
sandbox shows unless the name is one a harness cache gives its checkouts
(``…/repos/<mirror>/history/<40-hex commit>/.git/objects``: an ancestry-only checkout,
``bench/workspaces.py``), with no link on the way, and a directory:
nothing else of the host can be made readable by writing it.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from . import safefs

_ALTERNATES = ".git/objects/info/alternates"
_CACHED = re.compile(r"^/(?:[^/\0]+/)*repos/[^/\0]+/history/[0-9a-f]{40}/\.git/objects$")


def borrowed_objects(root: Path) -> tuple[str, ...]:
    """The checkout object stores the workspace at ``root`` borrows, as the sandbox may show
    them (see the module docstring); () when it borrows none or names anything else."""
    try:
        text = safefs.read_text(root, _ALTERNATES, 64 << 10)
    except (OSError, safefs.UnsafePath, UnicodeDecodeError):
        return ()
    found = []
    for line in text.splitlines():
        path = line.strip()
        if not _CACHED.match(path) or os.path.realpath(path) != path:
            continue
        try:
            if stat.S_ISDIR(os.lstat(path).st_mode):
                found.append(path)
        except OSError:
            continue
    return tuple(found)


__all__ = ["borrowed_objects"]
