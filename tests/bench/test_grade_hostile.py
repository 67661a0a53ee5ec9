"""Grading a workspace whose patch (or whose tests, running in the sandbox) attack the host side:
links where test files or reports should be, reports that are huge or not XML."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from pytest_toolpolicy.bench import load_instances
from pytest_toolpolicy.bench.grade import grade, grade_patch
from pytest_toolpolicy.bench.instance import Instance
from pytest_toolpolicy.bench.workspaces import materialize
from pytest_toolpolicy.primitives import Workspace
from pytest_toolpolicy.primitives.sandbox import Sandbox

from .gitmirrors import BASE, FIXED_OPS, P2P, git, make_bundled

SANDBOX = Sandbox.from_env()
HANG = "from calc import add\n\n\ndef test_hang():\n    while True:\n        pass\n"
# A conftest the model wrote: after pytest has written the report, swap it for something else.
SWAP_REPORT = """import atexit, os

LAUGHS = ('<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "' + 'a' * 64 + '">'
          + ''.join(f'<!ENTITY {{c}} "' + ('&' + p + ';') * 16 + '">'
                    for p, c in zip('abcdefg', 'bcdefgh'))
          + ']><testsuites><testsuite><testcase classname="x" name="&h;"/>'
          + '</testsuite></testsuites>')

def _swap():
    path = os.path.join(os.environ["TOOLPOLICY_GRADE_DIR"], "junit.xml")
    os.unlink(path)
    {action}

atexit.register(_swap)
"""


def bundled(tmp_path: Path, files: dict[str, str] = BASE, **row: object) -> Instance:
    make_bundled(tmp_path / "instances", "bundled__calc-1", files, **row)
    return load_instances(f"bundled:{tmp_path / 'instances'}").instances[0]


@pytest.fixture
def calc(tmp_path: Path) -> Instance:
    return bundled(tmp_path)


@pytest.fixture
def host_file(tmp_path: Path) -> Path:
    path = tmp_path / "host-secret.txt"
    path.write_text("host secret\n")
    return path


def fixed(instance: Instance, tmp_path: Path) -> Workspace:
    """The instance's workspace with the right fix in it."""
    ws = materialize(instance, tmp_path / "items")
    (ws.root / "calc/ops.py").write_text(FIXED_OPS)
    return ws


def test_a_test_file_linked_to_a_host_file_is_replaced_not_written(
    calc: Instance, tmp_path: Path, host_file: Path
) -> None:
    ws = fixed(calc, tmp_path)
    root = ws.root
    (root / "tests/test_ops.py").unlink()
    (root / "tests/test_ops.py").symlink_to(host_file)
    result = grade(ws, calc, sandbox=SANDBOX)
    assert host_file.read_text() == "host secret\n"
    assert result.resolved, result  # graded on the base test file plus test_patch
    assert os.readlink(root / "tests/test_ops.py") == str(host_file)  # restored as it was


def test_a_patch_that_links_a_test_file_to_a_host_file(
    calc: Instance, tmp_path: Path, host_file: Path
) -> None:
    scratch = tmp_path / "scratch"
    base = materialize(calc, tmp_path / "base").root
    shutil.copytree(base, scratch, ignore=shutil.ignore_patterns(".git"))
    git(scratch, "init", "-q")
    git(scratch, "add", "-A")
    git(scratch, "commit", "-qm", "base")
    (scratch / "calc/ops.py").write_text(FIXED_OPS)
    (scratch / "tests/test_ops.py").unlink()
    (scratch / "tests/test_ops.py").symlink_to(host_file)
    git(scratch, "add", "-A")
    patch = git(scratch, "diff", "--cached") + "\n"
    assert "new file mode 120000" in patch
    result = grade_patch(calc, patch, sandbox=SANDBOX, parent=tmp_path)
    assert host_file.read_text() == "host secret\n"
    assert result.resolved, result


def test_a_linked_test_directory_is_refused(calc: Instance, tmp_path: Path) -> None:
    ws = fixed(calc, tmp_path)
    root = ws.root
    host_dir = tmp_path / "host-dir"
    host_dir.mkdir()
    (host_dir / "keep.txt").write_text("keep\n")
    shutil.rmtree(root / "tests")
    (root / "tests").symlink_to(host_dir)
    result = grade(ws, calc, sandbox=SANDBOX)
    assert result.status == "infra_error" and not result.resolved
    assert "cannot reset the test files" in result.reason and "symbolic link" in result.reason
    assert os.listdir(host_dir) == ["keep.txt"]


@pytest.mark.parametrize(
    ("action", "refusal"),
    [
        ("os.symlink({host!r}, path)", "junit.xml: it is a symbolic link"),
        ("open(path, 'w').write('x' * (2 << 20))", "over the 1048576-byte read limit"),
        ("os.mkfifo(path)", "junit.xml: not a regular file"),
        ("open(path, 'w').write('host secret <')", "not valid XML"),
        ("open(path, 'w').write(LAUGHS)", "not valid XML: a DTD or entity declaration"),
    ],
    ids=["link", "huge", "fifo", "not-xml", "entities"],
)
def test_a_junit_report_the_tests_tampered_with_is_refused(
    calc: Instance,
    tmp_path: Path,
    host_file: Path,
    monkeypatch: pytest.MonkeyPatch,
    action: str,
    refusal: str,
) -> None:
    monkeypatch.setenv("TOOLPOLICY_LIMITS", "read_mb=1")
    ws = fixed(calc, tmp_path)
    root = ws.root
    (root / "conftest.py").write_text(SWAP_REPORT.format(action=action.format(host=str(host_file))))
    result = grade(ws, calc, sandbox=SANDBOX)
    assert result.status == "infra_error" and not result.resolved, result
    assert refusal in result.reason and "host secret" not in result.reason
    assert not list(root.glob(".toolpolicy-grade-*"))


def test_a_progress_log_turned_link_is_refused(tmp_path: Path, host_file: Path) -> None:
    files = {**BASE, "tests/test_slow.py": HANG}
    instance = bundled(tmp_path, files, PASS_TO_PASS=[*P2P, "tests/test_slow.py::test_hang"])
    ws = fixed(instance, tmp_path)
    (ws.root / "conftest.py").write_text(
        "import os\n\ndef pytest_runtest_setup(item):\n"
        "    log = os.path.join(os.environ['TOOLPOLICY_GRADE_DIR'], 'progress.log')\n"
        f"    os.unlink(log)\n    os.symlink({str(host_file)!r}, log)\n"
    )
    result = grade(ws, instance, sandbox=SANDBOX, timeout=3)
    assert result.status == "infra_error", result
    assert "progress.log: it is a symbolic link" in result.reason
    assert "host secret" not in result.reason
