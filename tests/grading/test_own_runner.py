"""The agent's run_test through a repository's own runner: django ids become runtests.py
labels, sympy names become their files and -k; anything else stays run_test's own."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_toolpolicy.grading.own_runner import OwnRunner
from pytest_toolpolicy.primitives.run_test import run_test
from pytest_toolpolicy.primitives.sandbox import Sandbox

DJANGO = "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1"
SYMPY = "bin/test -C --verbose"


def nowhere(name: str) -> list[str]:
    raise AssertionError(f"looked up {name}")


@pytest.mark.parametrize(
    ("target", "command"),
    [
        (
            "test_float (test_div.DivTests)",
            f"{DJANGO} test_div.DivTests.test_float",
        ),
        (
            " test_a (admin_views.tests.AdminTests)  test_b (admin_views.tests.AdminTests.test_b)",
            f"{DJANGO} admin_views.tests.AdminTests.test_a admin_views.tests.AdminTests.test_b",
        ),
        ("tests/test_div.py::test_float", None),  # a node id: run_test's own
        ("test_float (test_div.DivTests); rm -rf /", None),  # more than ids: a shell command
        ("python -m pytest", None),
    ],
)
def test_django_ids(target: str, command: str | None) -> None:
    assert OwnRunner(DJANGO, "django", nowhere).command(target) == command


def test_sympy_names_run_the_files_defining_them() -> None:
    defined = {
        "test_issue_12092": ["sympy/core/tests/test_basic.py", "sympy/core/basic.py"],
        "test_other": ["sympy/core/tests/test_basic.py", "sympy/utilities/tests/test_x.py"],
    }
    runner = OwnRunner(SYMPY, "sympy", lambda name: defined.get(name, []))
    assert runner.command("test_issue_12092 test_other") == (
        f"{SYMPY} sympy/core/tests/test_basic.py sympy/utilities/tests/test_x.py "
        "-k test_issue_12092 test_other"
    )
    assert runner.command("test_nowhere") is None  # no file defines it: run_test's own
    assert runner.command("test_issue_12092; echo") is None
    assert OwnRunner(SYMPY, "pytest", nowhere).command("test_issue_12092") is None


def test_run_test_runs_the_runners_command_and_the_exit_code_decides(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "tests").mkdir(parents=True)
    (root / "tests/runtests.py").write_text(
        "import sys\nprint('test_float (test_div.DivTests) ... ok')\n"
        "sys.exit(0 if sys.argv[1:] == ['test_div.DivTests.test_float'] else 1)\n"
    )
    runner = OwnRunner("python tests/runtests.py", "django", nowhere).command
    sandbox = Sandbox.from_env()
    env = run_test(root, sandbox, "test_float (test_div.DivTests)", timeout=60, runner=runner)
    assert env["ok"], env
    data = env["data"]
    assert (data["mode"], data["passed"], data["exit_code"]) == ("runner", True, 0)
    assert data["command"] == "python tests/runtests.py test_div.DivTests.test_float"
    env = run_test(root, sandbox, "test_exact (test_div.DivTests)", timeout=60, runner=runner)
    assert (env["data"]["passed"], env["data"]["exit_code"]) == (False, 1)
    # what is not an id is a shell command, as without a runner
    env = run_test(root, sandbox, "echo hi", timeout=60, runner=runner)
    assert env["data"]["mode"] == "shell" and "command" not in env["data"]
