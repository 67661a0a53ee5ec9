from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

# Imported once here, before any pytester test: pytester restores sys.modules after each test,
# so an extension module first imported inside one (pandas' Arrow types, on the first
# read_parquet) would be imported again later and refused as "already defined" by pyarrow.
import pandas.core.arrays.arrow.extension_types  # noqa: F401
import pytest

from pytest_toolpolicy.primitives import Toolbox, Workspace
from pytest_toolpolicy.primitives.embedder import model_dir
from pytest_toolpolicy.primitives.sandbox import Sandbox, SandboxUnavailable
from pytest_toolpolicy.run.itemdir import WORKDIR_ENV

from .sessions import ADDOPTS


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--run-slow",
        action="store_true",
        help="also run the tests marked slow (end-to-end and statistical checks, left out of a "
        "plain run; `make test-slow` runs them with -m slow)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Every A/B session the suite starts (in process, in pytester's subprocesses, on xdist
    workers and theirs) runs its items under a root of the suite's own, never where a user's
    sessions on this machine run theirs: a user's session holding an item's lock held two of
    the suite's tests for 21 and 13 minutes. Made by the controller (its workers inherit it)
    and removed at its end."""
    if hasattr(config, "workerinput"):
        return
    root = tempfile.mkdtemp(prefix="toolpolicy-tests-workdir-")
    before = os.environ.get(WORKDIR_ENV)
    os.environ[WORKDIR_ENV] = root

    def restore() -> None:
        if before is None:
            os.environ.pop(WORKDIR_ENV, None)
        else:
            os.environ[WORKDIR_ENV] = before
        shutil.rmtree(root, ignore_errors=True)

    config.add_cleanup(restore)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``slow`` are deselected unless asked for: by --run-slow, by any -m
    expression (``-m slow`` runs only them), or by naming the test itself (``path::name``)."""
    if config.getoption("--run-slow") or config.option.markexpr:
        return
    named = [_nodeid(config, arg) for arg in config.args if "::" in arg]
    slow = [
        item
        for item in items
        if item.get_closest_marker("slow")
        and not any(item.nodeid == n or item.nodeid.startswith((f"{n}[", f"{n}::")) for n in named)
    ]
    if slow:
        config.hook.pytest_deselected(items=slow)
        chosen = set(map(id, slow))
        items[:] = [item for item in items if id(item) not in chosen]


def _nodeid(config: pytest.Config, arg: str) -> str:
    """A command-line ``path::name`` as a node id (relative to the rootdir)."""
    path, sep, rest = arg.partition("::")
    absolute = (config.invocation_params.dir / path).resolve()
    if absolute.is_relative_to(config.rootpath):
        path = absolute.relative_to(config.rootpath).as_posix()
    return path + sep + rest


@pytest.fixture
def pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """pytester, its sessions given their own PYTEST_ADDOPTS (tests/sessions.py says why), and
    a HOME of their own below the project directory rather than the project directory itself
    (pytester's), where a session with an external agent is refused (session/confinement.py)."""
    monkeypatch.setenv("PYTEST_ADDOPTS", ADDOPTS)
    home = pytester.path / ".home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return pytester


FILES = {
    "src/shop/__init__.py": '"""A small shop."""\nfrom .cart import Cart\n',
    "src/shop/cart.py": '''"""Shopping carts."""

import functools


class Cart:
    """A cart of priced items.

    More text.
    """

    def __init__(self):
        self.items = []

    @functools.lru_cache(maxsize=None)
    def total(
        self,
        discount=0,
    ):
        """Sum of prices minus discount."""
        return sum(p for _, p in self.items) - discount

    def add(self, name, price):
        self.items.append((name, price))

        def audit():
            return len(self.items)

        return audit()


def helper(x): return x * 2


if True:
    def conditional():
        pass
''',
    "src/shop/broken.py": "def oops(:\n    pass\n",
    "tests/test_cart.py": (
        "from shop.cart import Cart\n\n\ndef test_add():\n    assert Cart().add('a', 1) == 1\n"
    ),
}


def make_repo(root: Path, files: dict[str, str] = FILES) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (root / "src/shop/latin1.py").write_bytes("name = 'caf\xe9'\n".encode("latin-1"))
    (root / "src/shop/blob.py").write_bytes(b"\x00\x01binary")
    return root


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "repo")
    Workspace.create(root)
    return root


@pytest.fixture
def box(repo: Path) -> Toolbox:
    return Toolbox(repo)


@pytest.fixture(scope="session")
def assembled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The embedding model, assembled once per session from the installed packages."""
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("TOOLPOLICY_EMBED_MODEL_DIR", raising=False)
        mp.setenv("TOOLPOLICY_CACHE_DIR", str(tmp_path_factory.mktemp("session-cache")))
        return model_dir()


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, assembled: Path) -> Path:
    """Every test gets its own empty cache directory: nothing reads or writes the user's."""
    monkeypatch.setenv("TOOLPOLICY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TOOLPOLICY_EMBED_MODEL_DIR", str(assembled))
    return tmp_path / "cache"


@pytest.fixture(scope="session")
def bwrap_sandbox() -> Sandbox:
    """The real sandbox, for tests of what it holds; they skip, saying why, where bubblewrap
    cannot run."""
    try:
        return Sandbox.select("require")
    except SandboxUnavailable as exc:
        pytest.skip(f"needs bubblewrap, which cannot run here: {exc}")
