"""Grading a repository whose own runner reports its tests, read as SWE-bench reads its log:
a small repository of ours run by unittest, whose verbose lines are django's format."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_toolpolicy.bench.instance import Instance
from pytest_toolpolicy.bench.workspaces import materialize
from pytest_toolpolicy.envs.cache import environment_for
from pytest_toolpolicy.envs.spec import SPECS_ENV
from pytest_toolpolicy.grading.grade import grade
from pytest_toolpolicy.primitives.sandbox import Sandbox

from ..bench.gitmirrors import git
from ..envs.test_cache import SPECS, make_repo, package

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
