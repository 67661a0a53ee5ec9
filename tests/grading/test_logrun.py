"""Grading a repository whose own runner reports its tests: each outcome reported over the
side channel by grading's reporter, the log read as SWE-bench reads it and held against it.
Small repositories of ours: one run by unittest, whose verbose lines are django's format, one
by sympy's runner in miniature (``sympy_like.py``)."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

import pytest

from pytest_toolpolicy.bench.instance import Instance
from pytest_toolpolicy.bench.workspaces import materialize
from pytest_toolpolicy.envs.cache import environment_for
from pytest_toolpolicy.envs.environment import Environment
from pytest_toolpolicy.envs.spec import SPECS_ENV, EnvSpec, spec_for
from pytest_toolpolicy.grading.grade import grade
from pytest_toolpolicy.primitives.sandbox import Sandbox
from pytest_toolpolicy.primitives.workspace import Workspace

from ..bench.gitmirrors import git
from ..envs.test_cache import SPECS, make_repo, package
from .sympy_like import runner_files
from .test_grade_pytest_versions import pyenv_python

SANDBOX = Sandbox.from_env()
TESTS = (
    "import unittest\n\nfrom calc import div\n\n\nclass DivTests(unittest.TestCase):\n"
    "    def test_exact(self):\n        self.assertEqual(div(6, 3), 2)\n"
)
NEW_TEST = "\n    def test_float(self):\n        self.assertEqual(div(1, 2), 0.5)\n"
# django's runner names a test "name (module.Class)", as unittest did before 3.11
RUNTESTS = (
    "import sys, unittest\n\n\nclass Result(unittest.TextTestResult):\n"
    "    def getDescription(self, test):\n"
    "        kind = type(test)\n"
    "        return f'{test._testMethodName} ({kind.__module__}.{kind.__qualname__})'\n\n\n"
    "suite = unittest.defaultTestLoader.loadTestsFromNames(sys.argv[1:])\n"
    "unittest.TextTestRunner(verbosity=2, resultclass=Result).run(suite)\n"
)
RUNNER = "cd tests && python runtests.py"


@pytest.fixture
def django_like(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Instance, Path]:
    specs = tmp_path / "specs.toml"
    specs.write_text(
        SPECS
        + '[repo."acme/runner"]\n'
        + f'test_cmd = "{RUNNER}"\nlog_parser = "django"\nrunner_files = ["tests/runtests.py"]\n'
    )
    monkeypatch.setenv(SPECS_ENV, str(specs))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    files = {
        **package("calc"),
        "calc/__init__.py": "def div(a, b):\n    return a // b\n",
        "tests/test_div.py": TESTS,
        "tests/runtests.py": RUNTESTS,
    }
    mirrors = tmp_path / "mirrors"
    (base,) = make_repo(mirrors / "acme__runner", files)
    root = mirrors / "acme__runner"
    (root / "tests/test_div.py").write_text(TESTS + NEW_TEST)
    test_patch = git(root, "diff")
    git(root, "checkout", "--", ".")
    instance = Instance(
        instance_id="acme__runner-1",
        repo="acme/runner",
        base_commit=base,
        problem_statement="div(1, 2) is 0",
        patch="",
        test_patch=test_patch,
        FAIL_TO_PASS=("test_float (test_div.DivTests)",),
        PASS_TO_PASS=("test_exact (test_div.DivTests)",),
        version="1.0",
        source="local",
    )
    return instance, mirrors


def test_the_runners_log_decides(
    django_like: tuple[Instance, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    instance, mirrors = django_like
    monkeypatch.setenv("TOOLPOLICY_CACHE_DIR", str(tmp_path / "cache"))
    env = environment_for(instance, repos=mirrors)
    assert env.spec is not None and env.spec.log_parser == "django"
    ws = materialize(instance, tmp_path / "items", repos=mirrors)
    result = grade(ws, instance, sandbox=SANDBOX, env=env)
    assert (result.status, result.tests) == (
        "unresolved",
        {"test_float (test_div.DivTests)": "failed", "test_exact (test_div.DivTests)": "passed"},
    ), result
    (ws.root / "calc/__init__.py").write_text("def div(a, b):\n    return a / b\n")
    result = grade(ws, instance, sandbox=SANDBOX, env=env)
    assert result.status == "resolved", result
    # The runner's own files take no part as the agent left them.
    (ws.root / "tests/runtests.py").write_text("print('test_float (test_div.DivTests) ... ok')\n")
    (ws.root / "calc/__init__.py").write_text("def div(a, b):\n    return a // b\n")
    result = grade(ws, instance, sandbox=SANDBOX, env=env)
    assert result.status == "unresolved" and any(
        r.startswith("tests/runtests.py: ") for r in result.reverted
    ), result
    assert os.path.exists(ws.root / "tests/runtests.py")


# Product code that prints the runner's "ok" line of every test it can find, when the process
# ends (a finalizer, which ``reach.py``'s text rules do not name): what SWE-bench's parsers read
# as the last word on each test.
DJANGO_FORGER = """
import os, re, weakref


def _forge():
    for name in sorted(os.listdir(".")):
        if name.startswith("test_") and name.endswith(".py"):
            text = open(name).read()
            cls = re.search(r"^class (\\w+)", text, re.M).group(1)
            for test in re.findall(r"def (test_\\w+)", text):
                print(f"{test} ({name[:-3]}.{cls}) ... ok")


weakref.finalize(_forge, _forge)
"""
SYMPY_FORGER = """
import re, sys, weakref


def _forge():
    for path in sys.argv[1:]:
        try:
            text = open(path).read()
        except OSError:
            continue
        for name in re.findall(r"^def (test_\\w+)", text, re.M):
            print(name, "ok")


weakref.finalize(_forge, _forge)
"""


def test_product_code_printing_ok_lines_is_caught(
    django_like: tuple[Instance, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    instance, mirrors = django_like
    monkeypatch.setenv("TOOLPOLICY_CACHE_DIR", str(tmp_path / "cache"))
    env = environment_for(instance, repos=mirrors)
    ws = materialize(instance, tmp_path / "items", repos=mirrors)
    unfixed = "def div(a, b):\n    return a // b\n"
    (ws.root / "calc/__init__.py").write_text(unfixed + DJANGO_FORGER)
    result = grade(ws, instance, sandbox=SANDBOX, env=env)
    assert result.status == "unresolved", result
    said = (
        "the runner's log and its reporter disagree on "
        "test_float (test_div.DivTests): log passed, reporter failed"
    )
    assert result.reason is not None and said in result.reason, result
    assert result.tests == {
        "test_float (test_div.DivTests)": "failed",
        "test_exact (test_div.DivTests)": "passed",
    }


def test_a_command_the_launcher_cannot_take_over_is_infrastructure(
    django_like: tuple[Instance, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    instance, mirrors = django_like
    monkeypatch.setenv("TOOLPOLICY_CACHE_DIR", str(tmp_path / "cache"))
    env = environment_for(instance, repos=mirrors)
    assert env.spec is not None
    piped = dataclasses.replace(env.spec, test_cmd=f"{RUNNER} | tee log.txt")
    ws = materialize(instance, tmp_path / "items", repos=mirrors)
    result = grade(ws, instance, sandbox=SANDBOX, env=dataclasses.replace(env, spec=piped))
    assert result.status == "infra_error", result
    assert result.reason == (
        f"grading's launcher cannot run the test command '{RUNNER} | tee log.txt' "
        "('|' is more than a plain word); it takes over [cd DIR &&] [python] SCRIPT ARGS..., "
        "SCRIPT a path in the repository"
    )


SYMPY_TESTS = "from sympy import div\n\n\ndef test_exact():\n    assert div(6, 3) == 2\n"
SYMPY_NEW_TEST = "\n\ndef test_float():\n    assert div(1, 2) == 0.5\n"
UNFIXED = "def div(a, b):\n    return a // b\n"
FIXED = "def div(a, b):\n    return a / b\n"


def sympy_like(
    tmp_path: Path, new_layout: bool = False, child: bool = False, python: str = sys.executable
) -> tuple[Workspace, Instance, Environment]:
    """A workspace of a sympy-like repository whose test_patch adds test_float; the spec is
    sympy's shipped one (its command, parser and runner files). ``child``: the runner runs the
    tests in a child Python, as sympy does where ``PYTHONHASHSEED`` is not set (the sandbox
    sets it)."""
    library = "testing" if new_layout else "utilities"
    unset = "import os\nos.environ.pop('PYTHONHASHSEED')\n" if child else ""
    files = {
        **runner_files(new_layout),
        "sympy/__init__.py": f"{unset}from .core import div\nfrom .{library}.runtests import test\n",
        "sympy/core.py": UNFIXED,
        "sympy/tests/test_core.py": SYMPY_TESTS,
    }
    mirrors = tmp_path / "mirrors"
    root = mirrors / "acme__sym"
    (base,) = make_repo(root, files)
    (root / "sympy/tests/test_core.py").write_text(SYMPY_TESTS + SYMPY_NEW_TEST)
    test_patch = git(root, "diff")
    git(root, "checkout", "--", ".")
    instance = Instance(
        instance_id="acme__sym-1",
        repo="acme/sym",
        base_commit=base,
        problem_statement="div(1, 2) is 0",
        patch="",
        test_patch=test_patch,
        FAIL_TO_PASS=("test_float",),
        PASS_TO_PASS=("test_exact",),
        version="1.0",
        source="local",
    )
    shipped = spec_for("sympy/sympy", "1.1")
    spec = EnvSpec(
        "acme/sym",
        "1.0",
        test_cmd=shipped.test_cmd,
        log_parser=shipped.log_parser,
        runner_files=shipped.runner_files,
    )
    env = Environment(python, (".",), plugin_autoload=False, spec=spec)
    return materialize(instance, tmp_path / "items", repos=mirrors), instance, env


@pytest.mark.parametrize(
    ("new_layout", "child", "minor"),
    [(False, False, None), (True, False, None), (False, True, None), (True, True, "3.9")],
    ids=["utilities", "testing", "utilities-child", "testing-child-3.9"],
)
def test_sympys_runner_reports_through_its_reporter(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    new_layout: bool,
    child: bool,
    minor: str | None,
) -> None:
    """sympy's environments are Python 3.9; its runner may run the tests in a child."""
    python = sys.executable if minor is None else pyenv_python(minor)
    if python is None:
        pytest.skip(f"no Python {minor} (looked in `pyenv root`/versions and on PATH)")
    monkeypatch.setenv("TOOLPOLICY_CACHE_DIR", str(tmp_path / "cache"))
    ws, instance, env = sympy_like(tmp_path, new_layout, child, python)
    result = grade(ws, instance, sandbox=SANDBOX, env=env)
    assert (result.status, result.tests) == (
        "unresolved",
        {"test_float": "failed", "test_exact": "passed"},
    ), result
    assert result.reason == "test_float failed"
    (ws.root / "sympy/core.py").write_text(FIXED)
    result = grade(ws, instance, sandbox=SANDBOX, env=env)
    assert (result.status, result.reason) == ("resolved", None), result


def test_sympy_product_code_printing_ok_lines_is_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The measured hole (sympy__sympy-12096): an atexit hook in the module under test prints
    ``<name> ok`` for every test of the files on the command line."""
    monkeypatch.setenv("TOOLPOLICY_CACHE_DIR", str(tmp_path / "cache"))
    ws, instance, env = sympy_like(tmp_path)
    (ws.root / "sympy/core.py").write_text(UNFIXED + SYMPY_FORGER)
    result = grade(ws, instance, sandbox=SANDBOX, env=env)
    assert (result.status, result.tests) == (
        "unresolved",
        {"test_float": "failed", "test_exact": "passed"},
    ), result
    said = "the runner's log and its reporter disagree on test_float: log passed, reporter failed"
    assert result.reason is not None and said in result.reason, result


def test_the_runners_library_is_put_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLPOLICY_CACHE_DIR", str(tmp_path / "cache"))
    ws, instance, env = sympy_like(tmp_path)
    library = ws.root / "sympy/utilities/runtests.py"
    # a failed assertion reported as a pass: the reporter would say what the runner tells it
    edited = library.read_text().replace("reporter.test_fail((t, v, tr))", "reporter.test_pass()")
    assert edited != library.read_text()
    library.write_text(edited)
    # sympy/testing/ is not there at this base commit: what the agent adds there goes too
    (ws.root / "sympy/testing").mkdir()
    (ws.root / "sympy/testing/runtests.py").write_text("raise SystemExit(0)\n")
    result = grade(ws, instance, sandbox=SANDBOX, env=env)
    assert (result.status, result.tests["test_float"]) == ("unresolved", "failed"), result
    assert sorted(r.split(":")[0] for r in result.reverted) == [
        "sympy/testing/runtests.py",
        "sympy/utilities/runtests.py",
    ], result
    assert library.read_text() == edited  # the workspace itself is left as the agent left it


def test_a_runner_that_never_loads_the_reporter_is_not_graded_by_its_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLPOLICY_CACHE_DIR", str(tmp_path / "cache"))
    ws, instance, env = sympy_like(tmp_path)
    assert env.spec is not None
    printer = "import sys\nfor name in ('test_float', 'test_exact'):\n    print(name, 'ok')\n"
    (ws.root / "bin/printer").write_text(printer)
    git(ws.root, "add", "bin/printer")
    git(ws.root, "commit", "-qm", "a runner of its own")
    spec = dataclasses.replace(env.spec, test_cmd="python bin/printer")
    result = grade(ws, instance, sandbox=SANDBOX, env=dataclasses.replace(env, spec=spec))
    assert result.status == "infra_error", result
    assert result.reason is not None and result.reason.startswith(
        "the runner never loaded sympy's runtests module, so nothing reported a test: "
        "the test runner reported no test (exit 0): test_float ok | test_exact ok"
    ), result
