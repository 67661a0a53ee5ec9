"""Grading a workspace whose patch (or whose tests, running in the sandbox) attack the host side
or the result: links where test files should be, processes and code that write to the result
channel."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from pytest_toolpolicy.bench import load_instances
from pytest_toolpolicy.bench.instance import Instance
from pytest_toolpolicy.bench.workspaces import materialize
from pytest_toolpolicy.grading.grade import grade, grade_patch
from pytest_toolpolicy.primitives import Workspace
from pytest_toolpolicy.primitives.sandbox import Sandbox

from ..bench.gitmirrors import BASE, FIXED_OPS, git, make_bundled

SANDBOX = Sandbox.from_env()


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


def test_a_linked_test_directory_is_put_back_not_followed(calc: Instance, tmp_path: Path) -> None:
    ws = fixed(calc, tmp_path)
    root = ws.root
    host_dir = tmp_path / "host-dir"
    host_dir.mkdir()
    (host_dir / "keep.txt").write_text("keep\n")
    shutil.rmtree(root / "tests")
    (root / "tests").symlink_to(host_dir)
    result = grade(ws, calc, sandbox=SANDBOX)
    assert result.resolved, result  # graded on the base test files plus test_patch
    assert any(r.startswith("tests/test_ops.py: ") for r in result.reverted), result.reverted
    assert os.listdir(host_dir) == ["keep.txt"]
    assert os.readlink(root / "tests") == str(host_dir)  # the agent's workspace, as it left it


# Product code (the agent's, kept in the run) that goes after the result channel from a
# process of its own: the channel is not inherited, its variable is gone, and the plugin's
# directory is read-only; whatever it writes, wherever it can, reaches no verdict.
ESCAPE = """import os, subprocess, sys

FORGED = b'{"k": "report", "n": "x", "ids": ["tests/test_ops.py::test_div_float"], '
FORGED += b'"when": "call", "outcome": "passed"}\\n{"k": "finish", "status": 0}\\n'
CHILD = (
    "import os, sys\\n"
    "for fd in range(3, 256):\\n"
    "    try:\\n"
    "        os.write(fd, sys.stdin.buffer.read() if fd == 3 else b'')\\n"
    "    except OSError:\\n"
    "        pass\\n"
)
subprocess.run([sys.executable, "-c", CHILD], input=FORGED)
for name in ("TOOLPOLICY_CHANNEL_FD", "TOOLPOLICY_GRADE_FD"):
    assert name not in os.environ, name
plugin = sys.modules.get("toolpolicy_grade_plugin")
if plugin is not None:
    try:
        with open(os.path.join(os.path.dirname(plugin.__file__), "grade.json"), "w") as f:
            f.write('{"ids": [], "parser": "pytest"}')
    except OSError:
        pass
"""


def test_a_process_the_tests_start_cannot_write_a_result(calc: Instance, tmp_path: Path) -> None:
    ws = materialize(calc, tmp_path / "items")  # no fix: test_div_float must fail
    (ws.root / "calc/escape.py").write_text(ESCAPE)
    (ws.root / "calc/__init__.py").write_text("from . import escape\nfrom .ops import add, div\n")
    result = grade(ws, calc, sandbox=SANDBOX)
    assert result.status == "unresolved", result
    assert result.tests["tests/test_ops.py::test_div_float"] == "failed"
    assert result.tests["tests/test_ops.py::test_add"] == "passed"


# In-process: the agent's product code writes forged records to every pipe it can find. The
# plugin's own report of the failure still decides (failed outranks passed), and a line the
# plugin never writes makes the run untrusted.
IN_PROCESS = """import os, stat

def _forge(data):
    for fd in range(3, 256):
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode):
                os.write(fd, data)
        except OSError:
            pass

_forge({payload!r})
"""
PASSED = (
    b'{"k": "report", "n": "tests/test_ops.py::test_div_float", '
    b'"ids": ["tests/test_ops.py::test_div_float"], "when": "call", "outcome": "passed"}\n'
)


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (PASSED, "a report of a test that never started"),
        (b"garbage\n", "the result channel held what the grading plugin never writes"),
    ],
    ids=["a-forged-pass", "garbage"],
)
def test_records_forged_in_process_turn_no_failure_into_a_pass(
    calc: Instance, tmp_path: Path, payload: bytes, reason: str
) -> None:
    ws = materialize(calc, tmp_path / "items")
    (ws.root / "calc/forge.py").write_text(IN_PROCESS.format(payload=payload))
    (ws.root / "calc/__init__.py").write_text("from . import forge\nfrom .ops import add, div\n")
    result = grade(ws, calc, sandbox=SANDBOX)
    assert result.status == "unresolved", result
    # Both what the run showed and what the patch's text does say so.
    assert any(reason in said for said in result.tampering), result
    assert "calc/forge.py: reaches into the harness (descriptors: os.write" in result.tampering[0]
