"""Small real projects under git for the bench tests: a package with tests, a base commit and a
fix commit, served as local mirrors (bare or not) or as bundled-format instance directories."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from pytest_toolpolicy.bench.bundled_repos import build
from pytest_toolpolicy.bench.instance import Instance
from pytest_toolpolicy.primitives import Workspace

IDENTITY = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@localhost",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@localhost",
}
# An in-tree PEP 517 backend, so that ``pip install --no-index -e`` works offline: a fresh venv
# has setuptools but not ``wheel``, which setuptools' own editable build needs.
BACKEND = """import os, zipfile

def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    name = "calc-1.0-py3-none-any.whl"
    info = "calc-1.0.dist-info/"
    files = {
        "calc.pth": os.getcwd() + "\\n",
        info + "METADATA": "Metadata-Version: 2.1\\nName: calc\\nVersion: 1.0\\n",
        info + "WHEEL": "Wheel-Version: 1.0\\nGenerator: t\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
    }
    files[info + "RECORD"] = "".join(f"{path},,\\n" for path in [*files, info + "RECORD"])
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as wheel:
        for path, text in files.items():
            wheel.writestr(path, text)
    return name

build_wheel = build_editable
"""
BASE = {
    "pyproject.toml": (
        '[build-system]\nrequires = []\nbuild-backend = "calc_backend"\nbackend-path = ["."]\n'
        '[project]\nname = "calc"\nversion = "1.0"\n'
    ),
    "calc_backend.py": BACKEND,
    "calc/__init__.py": "from .ops import add, div\n",
    "calc/ops.py": "def add(a, b):\n    return a + b\n\n\ndef div(a, b):\n    return a // b\n",
    "tests/test_ops.py": (
        "import pytest\n\nfrom calc import add, div\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
        "\n\nclass TestDiv:\n    @pytest.mark.parametrize('a,b,q', [(6, 3, 2), (9, 3, 3)])\n"
        "    def test_exact(self, a, b, q):\n        assert div(a, b) == q\n"
    ),
}
FIXED_OPS = "def add(a, b):\n    return a + b\n\n\ndef div(a, b):\n    return a / b\n"
NEW_TEST = "\n\ndef test_div_float():\n    assert div(1, 2) == 0.5\n"
F2P = ("tests/test_ops.py::test_div_float",)
P2P = ("tests/test_ops.py::test_add", "tests/test_ops.py::TestDiv::test_exact[6-3-2]")


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=cwd, env={**os.environ, **IDENTITY}, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def diff(root: Path, files: dict[str, str]) -> str:
    """The ``git diff`` that ``files`` make to the committed tree at ``root`` (then undone)."""
    write(root, files)
    git(root, "add", "-A")
    patch = git(root, "diff", "--cached") + "\n"
    git(root, "reset", "-q", "--hard")
    return patch


def make_mirror(root: Path, bare: bool = False) -> tuple[Path, str, str]:
    """A repo with a base commit and a fix commit; returns (mirror, base, fix)."""
    work = root.with_name(root.name + "-work") if bare else root
    work.mkdir(parents=True)
    git(work, "init", "-q", "-b", "main")
    write(work, BASE)
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "base")
    base = git(work, "rev-parse", "HEAD")
    write(work, {"calc/ops.py": FIXED_OPS})
    git(work, "commit", "-qam", "fix")
    fix = git(work, "rev-parse", "HEAD")
    if bare:
        git(root.parent, "clone", "-q", "--bare", str(work), str(root))
        shutil.rmtree(work)
    return root, base, fix


def patches(checkout: Path) -> tuple[str, str]:
    """(gold patch, test_patch) against the base files in ``checkout``."""
    test = (checkout / "tests/test_ops.py").read_text(encoding="utf-8") + NEW_TEST
    return diff(checkout, {"calc/ops.py": FIXED_OPS}), diff(checkout, {"tests/test_ops.py": test})


def real_instance(repo: str, base: str, gold: str, test_patch: str, **kw: object) -> Instance:
    fields: dict = dict(
        instance_id=repo.replace("/", "__") + "-1",
        repo=repo,
        base_commit=base,
        problem_statement="div(1, 2) returns 0",
        patch=gold,
        test_patch=test_patch,
        FAIL_TO_PASS=F2P,
        PASS_TO_PASS=P2P,
        version="1.0",
        source="local",
    )
    return Instance(**{**fields, **kw})


def make_bundled(root: Path, name: str, files: dict[str, str] = BASE, **row: object) -> Path:
    """``root/<name>/instance.json`` in the bundled format, its base a commit added to
    ``root/../repos/calc.fi`` (by ``bundled_repos.build``, as ``python -m pytest_toolpolicy.bench.bundled_repos`` does);
    returns the instance dir."""
    directory = root / name
    scratch = root / f".scratch-{name}"
    write(scratch, files)
    Workspace.create(scratch)
    gold, test_patch = patches(scratch)
    shutil.rmtree(scratch / ".git")
    fields = dict(
        instance_id=name,
        repo="bundled/calc",
        base_commit="0" * 40,  # set by build
        problem_statement="div(1, 2) returns 0",
        patch=gold,
        test_patch=test_patch,
        FAIL_TO_PASS=list(F2P),
        PASS_TO_PASS=list(P2P),
        version="1.0",
    )
    directory.mkdir(parents=True)
    (directory / "instance.json").write_text(json.dumps({**fields, **row}), encoding="utf-8")
    scratch.rename(directory / "repo")
    build(root)
    shutil.rmtree(directory / "repo")
    return directory
