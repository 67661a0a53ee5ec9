from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_toolpolicy.demo import EXAMPLE
from pytest_toolpolicy.primitives import Toolbox, Workspace


@pytest.fixture
def box(tmp_path: Path) -> Toolbox:
    """A git workspace holding a copy of the demo repo (``memstore``, with its expiry bug)."""
    root = tmp_path / "memstore"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("__pycache__"))
    return Toolbox(root, workspace=Workspace.create(root))
