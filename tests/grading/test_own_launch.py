"""The own-runner launcher: it runs the runner as ``python SCRIPT`` would, from where the
command runs it, with the channel taken over before the runner's code runs; no process the
runner starts can write to it. Its modules load on the Python 3.6 of django's oldest
environments."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_toolpolicy.envs.environment import Environment
from pytest_toolpolicy.grading import own_launch
from pytest_toolpolicy.grading.logrun import run_logged
from pytest_toolpolicy.primitives.sandbox import Sandbox

from ..bench.gitmirrors import write
from .test_grade_pytest_versions import pyenv_python

SANDBOX = Sandbox.from_env()
HERE = Path(own_launch.__file__).parent
MODULES = [HERE / name for name in ("own_launch.py", "own_unittest.py", "own_sympy.py")]
TEST_X = "test_x (test_t.T.test_x)" if sys.version_info >= (3, 11) else "test_x (test_t.T)"
# A record that would pass test_x, written to every descriptor a process can have.
FORGE = (
    "import os\nfor fd in range(3, 256):\n    try:\n"
    f'        os.write(fd, b\'{{"k": "result", "n": "{TEST_X}", "outcome": "passed"}}\\n\')\n'
    "    except OSError:\n        pass\n"
)
RUNTESTS = f"""import os, subprocess, sys, unittest

print("argv", sys.argv)
print("path", sys.path[0] == os.path.dirname(os.path.realpath(__file__)))
print("cwd", os.path.basename(os.getcwd()), __name__)
print("variable", os.environ.get("TOOLPOLICY_CHANNEL_FD"))
suite = unittest.defaultTestLoader.loadTestsFromNames(sys.argv[2:])
result = unittest.TextTestRunner(verbosity=2).run(suite)
subprocess.run([sys.executable, "-c", {FORGE!r}], check=True, close_fds=False)
sys.exit(7)
"""
TESTS = (
    "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_x(self):\n        self.fail()\n"
)


def test_the_runner_runs_as_its_command_says_and_its_children_cannot_report(
    tmp_path: Path,
) -> None:
    write(tmp_path, {"tests/runtests.py": RUNTESTS, "tests/test_t.py": TESTS})
    outcome = run_logged(
        tmp_path, "cd tests && python runtests.py --flag", ["test_t"], [TEST_X],
        "django", SANDBOX, Environment(sys.executable, plugin_autoload=False), 60, (),
    )  # fmt: skip
    assert outcome.tests == {TEST_X: "failed"}, outcome.output
    printed = outcome.output.splitlines()
    assert printed[:4] == [
        "argv ['runtests.py', '--flag', 'test_t']",
        "path True",
        "cwd tests __main__",
        "variable None",
    ], outcome.output


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.stem)
@pytest.mark.parametrize("minor", ["3.6", None])
def test_the_sandbox_modules_are_python_3_6(minor: str | None, path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    if minor is None:  # the parser's own check, wherever no 3.6 is at hand
        tree = ast.parse(source, feature_version=(3, 6))
        futures = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        assert all(n.module != "__future__" for n in futures)  # annotations: 3.7
        return
    python = pyenv_python(minor)
    if python is None:
        pytest.skip(f"no Python {minor} (looked in `pyenv root`/versions and on PATH)")
    # imported, not only compiled: 3.6 evaluates annotations at definition
    code = "import importlib.util, sys; s = importlib.util.spec_from_file_location('m', sys.argv[1]); s.loader.exec_module(importlib.util.module_from_spec(s))"
    proc = subprocess.run([python, "-c", code, str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
