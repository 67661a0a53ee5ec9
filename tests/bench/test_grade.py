from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from pytest_toolpolicy.bench import load_instances
from pytest_toolpolicy.bench.envs import Environment
from pytest_toolpolicy.bench.grade import grade, grade_patch
from pytest_toolpolicy.bench.instance import Instance
from pytest_toolpolicy.bench.junit import mangle, read_junit
from pytest_toolpolicy.bench.workspaces import materialize
from pytest_toolpolicy.primitives.sandbox import Sandbox

from .gitmirrors import BASE, F2P, P2P, git, make_bundled, make_mirror, patches, real_instance

SANDBOX = Sandbox.from_env()


def bundled(tmp_path: Path, files: dict[str, str] = BASE, **row: object) -> Instance:
    make_bundled(tmp_path / "instances", "bundled__calc-1", files, **row)
    result = load_instances(f"bundled:{tmp_path / 'instances'}")
    assert not result.errors, result.errors
    return result.instances[0]


@pytest.fixture
def calc(tmp_path: Path) -> Instance:
    return bundled(tmp_path)


def test_gold_patch_resolves(calc: Instance, tmp_path: Path) -> None:
    result = grade_patch(calc, calc.patch, sandbox=SANDBOX, parent=tmp_path)
    assert result.status == "resolved" and result.resolved, result
    assert result.tests == dict.fromkeys([*F2P, *P2P], "passed")
    assert result.reason is None and result.duration_s > 0
    assert [p.name for p in tmp_path.iterdir()] == ["instances"]  # the workspace is gone


def test_empty_patch_does_not_resolve(calc: Instance, tmp_path: Path) -> None:
    result = grade_patch(calc, "", sandbox=SANDBOX, parent=tmp_path)
    assert (result.status, result.resolved) == ("unresolved", False)
    assert result.tests == {F2P[0]: "failed", P2P[0]: "passed", P2P[1]: "passed"}
    assert result.reason == f"{F2P[0]} failed"


def test_patch_that_does_not_apply(calc: Instance, tmp_path: Path) -> None:
    wrong = calc.patch.replace("return a // b", "return a %% b")
    result = grade_patch(calc, wrong, sandbox=SANDBOX, parent=tmp_path)
    assert result.status == "patch_error" and not result.resolved
    assert result.reason.startswith("patch does not apply: error: patch failed: calc/ops.py")


def test_missing_test_ids_are_missing_not_a_crash(tmp_path: Path) -> None:
    ghosts = ["tests/test_ops.py::test_nope", "tests/test_ops.py::TestDiv::test_exact[0-0-0]"]
    instance = bundled(tmp_path, PASS_TO_PASS=[*P2P, *ghosts, "tests/test_gone.py::test_x"])
    result = grade_patch(instance, instance.patch, sandbox=SANDBOX, parent=tmp_path)
    assert result.status == "unresolved"
    assert {i: o for i, o in result.tests.items() if o != "passed"} == dict.fromkeys(
        [*ghosts, "tests/test_gone.py::test_x"], "missing"
    )
    assert result.tests[F2P[0]] == "passed"


def test_hung_test_times_out_and_the_next_grade_is_unaffected(tmp_path: Path) -> None:
    hang = "\n\ndef test_hang():\n    while True:\n        pass\n"
    files = {**BASE, "tests/test_slow.py": "from calc import add" + hang}
    instance = bundled(tmp_path, files, PASS_TO_PASS=[*P2P, "tests/test_slow.py::test_hang"])
    result = grade_patch(instance, instance.patch, sandbox=SANDBOX, parent=tmp_path, timeout=3)
    assert result.status == "unresolved" and result.duration_s < 15
    assert result.reason == "timed out after 3s while running tests/test_slow.py::test_hang"
    assert set(result.tests.values()) == {"failed"}
    fine = dataclasses.replace(instance, PASS_TO_PASS=P2P)
    assert grade_patch(fine, fine.patch, sandbox=SANDBOX, parent=tmp_path).resolved


def test_import_error_of_the_package_is_an_infra_error(tmp_path: Path) -> None:
    files = {**BASE, "calc/__init__.py": "import nosuchdep\n" + BASE["calc/__init__.py"]}
    instance = bundled(tmp_path, files)
    result = grade_patch(instance, instance.patch, sandbox=SANDBOX, parent=tmp_path)
    assert result.status == "infra_error" and not result.resolved
    assert result.reason == (
        "collection error in tests.test_ops unrelated to the patch: "
        "ModuleNotFoundError: No module named 'nosuchdep'"
    )


def test_collection_error_caused_by_the_patch_is_unresolved(calc: Instance, tmp_path: Path) -> None:
    broken = calc.patch.replace("+    return a / b", "+    return a / b)")
    result = grade_patch(calc, broken, sandbox=SANDBOX, parent=tmp_path)
    assert result.status == "unresolved"
    assert set(result.tests.values()) == {"error"}


def test_test_patch_that_does_not_apply_is_an_infra_error(calc: Instance, tmp_path: Path) -> None:
    instance = dataclasses.replace(calc, test_patch=calc.test_patch.replace(" == q", " == 0"))
    result = grade_patch(instance, instance.patch, sandbox=SANDBOX, parent=tmp_path)
    assert result.status == "infra_error"
    assert result.reason.startswith("test_patch does not apply: error: patch failed")


def test_grading_an_agent_workspace_leaves_it_as_it_was(calc: Instance, tmp_path: Path) -> None:
    ws = materialize(calc, tmp_path / "items")
    (ws.root / "calc/ops.py").write_text(BASE["calc/ops.py"].replace("//", "/"))
    # The agent also rewrote the test file: grading uses the base file plus test_patch instead.
    (ws.root / "tests/test_ops.py").write_text("def test_add():\n    assert False\n")
    before = ws.patch()
    result = grade(ws, calc, sandbox=SANDBOX)
    assert result.resolved, result
    assert ws.patch() == before and "test_div_float" not in before
    assert not list(ws.root.glob(".toolpolicy-grade-*"))


def test_real_instance_from_a_mirror(tmp_path: Path) -> None:
    mirror, base, _ = make_mirror(tmp_path / "mirrors" / "acme__calc", bare=True)
    git(tmp_path, "clone", "-q", str(mirror), str(tmp_path / "scratch"))
    git(tmp_path / "scratch", "checkout", "-q", base)
    instance = real_instance("acme/calc", base, *patches(tmp_path / "scratch"))
    env = Environment(sys.executable, (".",), plugin_autoload=False)
    kw = dict(sandbox=SANDBOX, env=env, repos=mirror.parent, cache_dir=tmp_path / "cache")
    assert grade_patch(instance, instance.patch, **kw).status == "resolved"


def test_junit_names_map_back_to_node_ids(tmp_path: Path) -> None:
    ids = ["tests/a.py::T::test_p[x::y z]", "tests/a.py::test_q", "tests/a.py::test_r"]
    assert mangle(ids[0]) == ("tests.a.T", "test_p[x::y z]")
    (tmp_path / "j.xml").write_text(
        '<testsuites><testsuite><testcase classname="tests.a.T" name="test_p[x::y z]"/>'
        '<testcase classname="sub.tests.a" name="test_q"><failure message="f"/></testcase>'
        '<testcase classname="tests.a" name="test_r"><skipped type="pytest.xfail"/></testcase>'
        '<testcase classname="tests.a" name="test_r"><error message="teardown"/></testcase>'
        "</testsuite></testsuites>"
    )
    report = read_junit(tmp_path / "j.xml", ids)
    assert report.outcomes == dict(zip(ids, ["passed", "failed", "error"], strict=True))
