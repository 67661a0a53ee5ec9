from pathlib import Path

import pytest

from pytest_toolpolicy.primitives.codeindex import CodeIndex


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> CodeIndex:
    """A one-module repo holding memstore.MemStore.remember, shared by a test module."""
    root: Path = tmp_path_factory.mktemp("repo")
    (root / "memstore.py").write_text(
        "class MemStore:\n    def remember(self, key):\n        return key\n", encoding="utf-8"
    )
    return CodeIndex(root)
