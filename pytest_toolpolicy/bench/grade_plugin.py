"""The pytest plugin grading loads inside the sandbox (copied there as a standalone module).

It runs exactly the asked-for node ids out of the test files given on the command line: an id
that does not exist is simply not run (reported "missing"), where pytest itself would stop the
whole session with a usage error. It records each test's node id in the junit report and each
test's start in a progress log, so a hung test can be named after the process is killed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

_DIR = Path(os.environ["TOOLPOLICY_GRADE_DIR"])
_WANTED = set(json.loads((_DIR / "ids.json").read_text(encoding="utf-8")))
_PROPERTY = "toolpolicy_nodeid"


def _asked_id(item: pytest.Item, start: Path) -> str:
    """The item's node id relative to the invocation directory (the workspace root), which is
    how instances spell them, whatever rootdir pytest picked."""
    rest = item.nodeid.partition("::")[2]
    path = os.path.relpath(item.path, start).replace(os.sep, "/")
    return f"{path}::{rest}" if rest else path


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    start = config.invocation_params.dir
    keep, drop = [], []
    for item in items:
        asked = item.nodeid if item.nodeid in _WANTED else _asked_id(item, start)
        if asked in _WANTED:
            item.user_properties.append((_PROPERTY, asked))
            keep.append(item)
        else:
            drop.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = keep


def pytest_runtest_logstart(nodeid: str, location: tuple[str, int | None, str]) -> None:
    with open(_DIR / "progress.log", "a", encoding="utf-8") as log:
        log.write(nodeid + "\n")
