"""One record per test-runner convention: the shipped records say what used to be ``parser ==``
branches, and a new convention is one record — a toy one here, read, targeted and graded
through the real sandbox with no other change."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_toolpolicy.envs import spec as envs_spec
from pytest_toolpolicy.envs.runners import RUNNERS, Runner, runner_for
from pytest_toolpolicy.grading import parsers
from pytest_toolpolicy.grading.directives import (
    grading_directives,
    runner_args,
    swebench_directives,
)
from pytest_toolpolicy.grading.grade import grade_patch
from pytest_toolpolicy.grading.own_runner import OWN_PARSERS, OwnRunner
from pytest_toolpolicy.grading.testids import PYTEST_PARSERS, swebench_id
from pytest_toolpolicy.primitives.sandbox import Sandbox

from ..bench.gitmirrors import F2P, P2P
from ..grading.test_grade import bundled

TOY = Runner("pytest_toy", cleans=("colours", "mouse_buttons"), short_paths=True)
OWN_TOY = Runner("unittest_toy", "own", "unittest", "django", directives="modules", targets="label")
# a coloured, parametrized test's node id, as a pytest_v2-like runner prints it
COLOURED = "\x1b[32mt.py::test[/tmp/run-7/data.txt-MouseButton.LEFT]\x1b[0m"
PATCH = "diff --git a/tests/admin/tests.py b/tests/admin/tests.py\n--- a/x\n+++ b/x\n"


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(RUNNERS, TOY.name, TOY)  # the one record each takes
    monkeypatch.setitem(RUNNERS, OWN_TOY.name, OWN_TOY)


def test_the_lists_every_module_used_are_the_records_names() -> None:
    assert all(runner.name == name for name, runner in RUNNERS.items())
    assert parsers.LOG_PARSERS == envs_spec.LOG_PARSERS == tuple(RUNNERS)
    assert PYTEST_PARSERS == ("pytest", "pytest_v2", "pytest_options", "matplotlib", "seaborn")
    assert OWN_PARSERS == ("django", "sympy")
    with pytest.raises(ValueError, match="'junit' is not one of pytest, pytest_v2, "):
        runner_for("junit")


@pytest.mark.usefixtures("toy")
def test_a_new_plugin_convention_is_one_record() -> None:
    listed = "t.py::test[/data.txt-1]"  # colours off, MouseButton renamed, the path shortened
    assert swebench_id(COLOURED, "pytest_toy") == listed
    assert swebench_id(COLOURED, "pytest") != listed
    log = f"PASSED {COLOURED}\nt.py::test_b FAILED"  # a summary line, a pytest 3 verbose line
    assert parsers.parse_log(log, "pytest_toy") == {listed: "PASSED"}  # no verbose_status
    assert parsers.parse_log(log, "pytest_v2")["t.py::test_b"] == "FAILED"
    assert runner_args("pytest_toy", [listed, "t.py::test_b"]) == ["t.py::test", "t.py::test_b"]
    assert runner_args("pytest", [listed]) == [listed]
    assert grading_directives("pytest_toy", [listed, "u.py::x"], PATCH) == ["t.py", "u.py"]


@pytest.mark.usefixtures("toy")
def test_a_new_own_runner_convention_is_one_record() -> None:
    assert runner_args("unittest_toy", ["test_a (admin.tests.C)"]) == ["admin.tests.C.test_a"]
    assert swebench_directives("unittest_toy", PATCH) == ["admin.tests"]
    command = OwnRunner("./runtests.py", "unittest_toy", lambda name: []).command
    assert command("test_a (admin.tests.C)") == "./runtests.py admin.tests.C.test_a"
    assert command("t.py::test_a") is None  # a node id is not this runner's
    log = "test_a (admin.tests.C) ... ok\ntest_b (admin.tests.C) ... FAIL\n"
    assert parsers.parse_log(log, "unittest_toy") == parsers.parse_log(log, "django")
    with pytest.raises(ValueError, match="'unittest_toy' is not one of pytest"):
        swebench_id("t.py::test_a", "unittest_toy")  # its ids are not pytest's


def test_an_environment_spec_may_name_a_registered_convention_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(envs_spec.SPECS_ENV, raising=False)
    user = tmp_path / "specs.toml"
    user.write_text("[default]\nlog_parser = 'pytest_toy'\n")
    with pytest.raises(envs_spec.EnvSpecError, match="log_parser: expected one of pytest,"):
        envs_spec.spec_for("a/b", "1", user_file=user)
    monkeypatch.setitem(RUNNERS, TOY.name, TOY)
    assert envs_spec.spec_for("a/b", "1", user_file=user).log_parser == "pytest_toy"


@pytest.mark.usefixtures("toy")
def test_a_new_plugin_convention_grades_through_the_real_sandbox(tmp_path: Path) -> None:
    calc = bundled(tmp_path)
    sandbox = Sandbox.from_env()
    gold = grade_patch(calc, calc.patch, sandbox=sandbox, parent=tmp_path, parser="pytest_toy")
    assert gold.status == "resolved" and gold.tests == dict.fromkeys([*F2P, *P2P], "passed")
    none = grade_patch(calc, "", sandbox=sandbox, parent=tmp_path, parser="pytest_toy")
    assert none.status == "unresolved" and none.tests[F2P[0]] == "failed"
