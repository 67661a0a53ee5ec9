"""The pytest plugin (entry point ``toolpolicy``).

Loading it changes nothing about an ordinary pytest run: it registers no autouse fixture and no
hook that alters collection or reporting. The fixtures below are inert until a test asks for
them by name.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from .primitives import Toolbox, Workspace


@pytest.fixture
def toolpolicy_toolbox(tmp_path: Path) -> Callable[[dict[str, str]], Toolbox]:
    """A factory: ``toolpolicy_toolbox({"pkg/mod.py": source, ...})`` writes the files into a
    fresh git workspace (they become its base commit) and returns the six primitives over it;
    the workspace is ``toolbox.workspace``."""

    def make(files: dict[str, str]) -> Toolbox:
        root = tmp_path / f"workspace{len(list(tmp_path.glob('workspace*')))}"
        for rel, text in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        root.mkdir(exist_ok=True)
        return Toolbox(root, workspace=Workspace.create(root))

    return make
