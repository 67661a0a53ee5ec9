"""Grading inside the environments SWE-bench's specs make: real old pytest (4.6 and 5.4 on
Python 3.9, as pytest-dev's own instances pin), the newest pytest for 3.9, and the harness's.
Each venv is built once per session from PyPI; without the interpreter the case is skipped,
saying which one is missing."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_toolpolicy.envs.cache import Environment, scrubbed_environ
from pytest_toolpolicy.grading import testids
from pytest_toolpolicy.grading.grade import grade_patch
from pytest_toolpolicy.primitives.sandbox import Sandbox

from ..bench.gitmirrors import BASE, F2P, P2P
from ..once import made_once
from .test_grade import DB_CONFTEST, bundled

SANDBOX = Sandbox.from_env()
PLUGIN = Path(testids.__file__).with_name("sandbox_plugin.py")
LAUNCHER = PLUGIN.with_name("launch.py")
MIX = """import socket

import pytest

from calc import add


@pytest.mark.parametrize("x", ["a b", "a c", "/tmp/x/y.txt"])
def test_param(x):
    assert x != "a c"


class TestK:
    def test_m(self):
        assert add(1, 1) == 2


def test_fail():
    assert add(1, 1) == 3


@pytest.fixture
def broken():
    raise RuntimeError("no db")


def test_err(broken):
    pass


def test_skip():
    pytest.skip("nope")


@pytest.mark.xfail(reason="known")
def test_xfail():
    assert 0


@pytest.mark.xfail(reason="known")
def test_xpass():
    pass


def test_net():
    socket.create_connection(("example.invalid", 80), 5)
"""
M = "tests/test_mix.py::"
# Listed as SWE-bench's psf/requests parser writes them; "[100%]" as in pytest-dev__pytest-5262.
OUTCOMES = {
    f"{M}test_param[a": "failed",  # "a b" passes, "a c" fails: FAILED is the last line
    f"{M}test_param[/y.txt]": "passed",
    f"{M}TestK::test_m": "passed",
    f"{M}test_fail": "failed",
    f"{M}test_err": "error",
    f"{M}test_skip": "skipped",
    f"{M}test_xfail": "passed",
    f"{M}test_xpass": "xpassed",
    f"{M}test_net": "network",
    "[100%]": "missing",
}
PYTESTS: dict[str, tuple[str, str] | None] = {
    # astropy 1.3's, the oldest a spec pins, with the spec's pins of what it needs
    "pytest-3.3.1-py3.6": ("3.6", "pytest==3.3.1 attrs==17.3.0 pluggy==0.6.0 py==1.11.0"),
    "pytest-4.6.11": ("3.9", "pytest==4.6.11"),
    "pytest-5.4.3": ("3.9", "pytest==5.4.3"),
    "pytest-newest-py3.9": ("3.9", "pytest"),
    "harness": None,  # the harness's own interpreter and pytest
}


def pyenv_python(minor: str) -> str | None:
    """The newest ``minor`` interpreter pyenv has, else ``pythonX.Y`` on PATH."""
    root = os.environ.get("PYENV_ROOT", "")
    if not root and shutil.which("pyenv"):
        root = subprocess.run(["pyenv", "root"], capture_output=True, text=True).stdout.strip()
    found = []
    for home in Path(root or os.devnull).joinpath("versions").glob(f"{minor}.*"):
        python = home / "bin" / f"python{minor}"
        if re.fullmatch(rf"{re.escape(minor)}\.\d+", home.name) and python.exists():
            found.append((int(home.name.rsplit(".", 1)[1]), str(python)))
    return max(found)[1] if found else shutil.which(f"python{minor}")


# A venv built from PyPI takes ~10 s: those cases are slow (`make test-slow`, in CI), the
# harness's own pytest runs in `make test`. Each venv is built once per test run, not once per
# xdist worker.


@pytest.fixture(
    scope="session",
    params=[
        pytest.param(n, marks=() if w is None else pytest.mark.slow) for n, w in PYTESTS.items()
    ],
)
def pytest_env(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Environment:
    wanted = PYTESTS[request.param]
    if wanted is None:
        return Environment(sys.executable, plugin_autoload=False)
    minor, requirement = wanted
    python = pyenv_python(minor)
    if python is None:
        pytest.skip(f"no Python {minor} (looked in `pyenv root`/versions and on PATH)")

    def build(venv: Path) -> None:
        env = scrubbed_environ()
        pip = [str(venv / "bin/python"), "-m", "pip", "install", "-q"]
        for argv in (
            [python, "-m", "venv", str(venv)],
            # 3.6's own pip (18.1) picks releases that need a newer Python, as specs say
            *([[*pip, "pip==21.3.1"]] if minor == "3.6" else []),
            [*pip, *requirement.split()],
        ):
            proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
            assert proc.returncode == 0, f"{' '.join(argv)}: {proc.stdout}{proc.stderr}"

    venv = made_once(tmp_path_factory, f"venv-{request.param}", build)
    code = "import pytest; print(pytest.__version__)"
    version = subprocess.run([str(venv / "bin/python"), "-c", code], capture_output=True, text=True)
    assert requirement.split()[0].partition("==")[2] in version.stdout, version
    return Environment(str(venv / "bin/python"), plugin_autoload=False)


def test_per_test_outcomes_on_every_pytest(tmp_path: Path, pytest_env: Environment) -> None:
    files = {**BASE, "tests/test_mix.py": MIX}
    instance = bundled(tmp_path, files, PASS_TO_PASS=[*P2P, *OUTCOMES])
    result = grade_patch(
        instance,
        instance.patch,
        sandbox=SANDBOX,
        parent=tmp_path,
        env=pytest_env,
        parser="pytest_options",
    )
    assert result.tests == {**dict.fromkeys([*F2P, *P2P], "passed"), **OUTCOMES}, result
    assert result.status == "unresolved"
    assert result.ignored == ("[100%]", f"{M}test_net")
    assert result.reason == (
        f"{M}test_param[a failed; {M}test_fail failed; {M}test_err error; {M}test_skip skipped; "
        f"{M}test_xpass xpassed; left out of the verdict, naming no test file: [100%]; "
        f"left out of the verdict, needing the network: {M}test_net"
    )


def test_a_shared_setup_error_on_every_pytest(tmp_path: Path, pytest_env: Environment) -> None:
    instance = bundled(tmp_path, {**BASE, "conftest.py": DB_CONFTEST})
    result = grade_patch(instance, instance.patch, sandbox=SANDBOX, parent=tmp_path, env=pytest_env)
    assert (result.status, result.reason) == (
        "infra_error",
        "every listed test errors at setup: RuntimeError: database unavailable (at conftest.py:6)",
    ), result


@pytest.mark.parametrize("path", [PLUGIN, LAUNCHER], ids=["plugin", "launcher"])
@pytest.mark.parametrize("minor", ["3.6", None])
def test_the_plugin_is_python_3_6_syntax(minor: str | None, path: Path) -> None:
    """SWE-bench's oldest pytest environments (astropy 1.3, scikit-learn 0.20) are Python 3.6."""
    source = path.read_text(encoding="utf-8")
    if minor is None:  # the parser's own check, wherever no 3.6 is at hand
        tree = ast.parse(source, feature_version=(3, 6))
        futures = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        assert all(n.module != "__future__" for n in futures)  # annotations: 3.7
        return
    python = pyenv_python(minor)
    if python is None:
        pytest.skip(f"no Python {minor} (looked in `pyenv root`/versions and on PATH)")
    code = "import ast, sys; compile(open(sys.argv[1]).read(), sys.argv[1], 'exec')"
    proc = subprocess.run([python, "-c", code, str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
