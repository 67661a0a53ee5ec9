"""The unittest reporter (django's runner) on every Python SWE-bench's django environments use:
each test's id is the one SWE-bench's django parser reads off the verbose log (``str(test)``
changed in 3.11, a docstring's first line, a subtest's description), every outcome unittest
has, and nothing of a test run nested inside a test. Each run is a real ``run_logged``: the
launcher, the reporter, the channel, the log held against it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_toolpolicy.envs.environment import Environment
from pytest_toolpolicy.grading.logrun import run_logged
from pytest_toolpolicy.grading.parsers import parse_log
from pytest_toolpolicy.primitives.sandbox import Sandbox

from ..bench.gitmirrors import write
from .test_grade_pytest_versions import pyenv_python

SANDBOX = Sandbox.from_env()
# django's runtests.py, for what the reporter sees: unittest's own verbose runner.
RUNTESTS = (
    "import sys, unittest\n\n"
    "suite = unittest.defaultTestLoader.loadTestsFromNames(sys.argv[1:])\n"
    "result = unittest.TextTestRunner(verbosity=2).run(suite)\n"
    "sys.exit(bool(result.failures or result.errors))\n"
)
MIX = '''import io
import unittest


class Broken(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        raise RuntimeError("no database")

    def test_never(self):
        pass


class Mix(unittest.TestCase):
    def test_ok(self):
        pass

    def test_fail(self):
        self.assertEqual(1, 2)

    def test_error(self):
        raise KeyError("boom")

    @unittest.skip("not here")
    def test_skip(self):
        pass

    @unittest.expectedFailure
    def test_xfail(self):
        self.assertEqual(1, 2)

    @unittest.expectedFailure
    def test_xpass(self):
        pass

    def test_doc(self):
        """A docstring's first line names it.

        Not this one."""

    def test_sub(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertNotEqual(i, 1)

    def test_loud(self):
        print("output of its own")


class Nested(unittest.TestCase):
    def test_runs_a_suite_of_its_own(self):
        class Inner(unittest.TestCase):
            def test_inner(self):
                self.fail("the inner run's, not the outer's")

        runner = unittest.TextTestRunner(stream=io.StringIO(), verbosity=2)
        self.assertEqual(len(runner.run(Inner("test_inner")).failures), 1)
'''


@pytest.mark.parametrize("minor", ["3.6", "3.8", "3.11", "3.12", "3.13", None])
def test_ids_and_outcomes_as_the_log_names_them(tmp_path: Path, minor: str | None) -> None:
    python = sys.executable if minor is None else pyenv_python(minor)
    if python is None:
        pytest.skip(f"no Python {minor} (looked in `pyenv root`/versions and on PATH)")
    write(tmp_path, {"tests/runtests.py": RUNTESTS, "tests/test_mix.py": MIX})
    env = Environment(python, plugin_autoload=False)
    outcome = run_logged(
        tmp_path, "./tests/runtests.py", ["test_mix"], None, "django", SANDBOX,
        env, 60, (),
    )  # fmt: skip
    new = (tuple(map(int, minor.split("."))) if minor else sys.version_info[:2]) >= (3, 11)

    def named(test: str, cls: str = "Mix") -> str:
        return f"{test} (test_mix.{cls}.{test})" if new else f"{test} (test_mix.{cls})"

    sub = f"{named('test_sub')} (i=1)"
    assert outcome.tests == {
        "setUpClass (test_mix.Broken)": "error",
        "A docstring's first line names it.": "passed",
        named("test_error"): "error",
        named("test_fail"): "failed",
        named("test_loud"): "passed",
        named("test_ok"): "passed",
        named("test_skip"): "skipped",
        named("test_sub"): "failed",
        sub: "failed",
        named("test_xfail"): "passed",
        named("test_xpass"): "xpassed",
        named("test_runs_a_suite_of_its_own", "Nested"): "passed",
    }, outcome.output
    # The log recorded these too, and agreed (run_logged raises where it does not).
    logged = parse_log(outcome.output, "django")
    assert {
        i: logged.get(i) for i in (named("test_ok"), named("test_fail"), named("test_loud"))
    } == {
        named("test_ok"): "PASSED",
        named("test_fail"): "FAILED",
        named("test_loud"): "PASSED",
    }
    assert logged.get("A docstring's first line names it.") == "PASSED"
    assert logged.get(sub) == ("FAILED" if new else None)  # 3.11 prints a failed subtest
