"""run_test: node ids vs shell strings, the exit code as the only verdict, and bad targets."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_toolpolicy.primitives.run_test import MAX_CHARS, MAX_LINES, run_test, tail_lines
from pytest_toolpolicy.primitives.sandbox import Sandbox

TESTS = """
import pytest

def test_ok():
    print("FAILED is only a word here")

def test_bad():
    print("1 passed")  # a lie in the output must not fool the verdict
    assert 1 == 2

@pytest.mark.parametrize("x", ["a b", "c"])
def test_param(x):
    assert x
"""
DATA_KEYS = {
    "target", "mode", "passed", "exit_code", "timed_out", "duration_s", "output",
    "output_truncated", "sandbox",
}  # fmt: skip


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return Sandbox.from_env()  # bwrap where it runs; security is test_security.py's job


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_x.py").write_text(TESTS)
    (tmp_path / "outside.txt").write_text("keep me")
    return root


def test_passing_node_ids_with_a_parametrized_one(ws: Path, sandbox: Sandbox):
    target = "tests/test_x.py::test_param[a b] tests/test_x.py::test_ok"
    env = run_test(ws, sandbox, target, timeout=60)
    assert env["ok"] and env["error"] is None
    data = env["data"]
    assert set(data) == DATA_KEYS
    assert (data["mode"], data["passed"], data["exit_code"], data["timed_out"]) == (
        "pytest", True, 0, False,
    )  # fmt: skip
    assert data["target"] == target and data["sandbox"] == sandbox.mode
    assert "2 passed" in data["output"] and not data["output_truncated"]


def test_verdict_is_the_exit_code_not_the_output(ws: Path, sandbox: Sandbox):
    env = run_test(ws, sandbox, "tests", timeout=60)  # an existing directory: pytest mode
    data = env["data"]
    assert env["ok"] and (data["mode"], data["passed"], data["exit_code"]) == ("pytest", False, 1)
    assert "FAILED tests/test_x.py::test_bad - assert 1 == 2" in data["output"]
    shell = run_test(ws, sandbox, "echo '5 passed'; exit 3", timeout=10)["data"]
    assert (shell["mode"], shell["passed"], shell["exit_code"]) == ("shell", False, 3)


def test_missing_test_file(ws: Path, sandbox: Sandbox):
    env = run_test(ws, sandbox, "tests/test_nope.py::test_a")
    assert env == {
        "ok": False,
        "error": "test target not found: tests/test_nope.py::test_a",
        "data": None,
    }


def test_unknown_test_in_an_existing_file_is_a_specific_failure(ws: Path, sandbox: Sandbox):
    env = run_test(ws, sandbox, "tests/test_x.py::test_nope", timeout=60)
    assert not env["ok"]
    assert env["error"].startswith(
        "pytest found no test for target tests/test_x.py::test_nope: ERROR: not found:"
    )
    assert env["data"]["exit_code"] == 4 and env["data"]["passed"] is False


def test_a_file_without_tests_is_a_specific_failure(ws: Path, sandbox: Sandbox):
    (ws / "tests" / "test_empty.py").write_text("x = 1\n")
    env = run_test(ws, sandbox, "tests/test_empty.py", timeout=60)
    assert not env["ok"] and env["data"]["exit_code"] == 5
    assert env["error"].startswith(
        "pytest found no test for target tests/test_empty.py: no tests ran"
    )


@pytest.mark.parametrize(
    ("target", "offender"),
    [
        ("../outside.txt::test_a", "../outside.txt::test_a"),
        ("tests/../../outside.py", "tests/../../outside.py"),
        ("/etc/test_passwd.py", "/etc/test_passwd.py"),
        ("rm -f ../outside.txt", "../outside.txt"),
        ("cat /etc/shadow", "/etc/shadow"),
        ("cp tests/test_x.py ~/stolen.py", "~/stolen.py"),
        ("echo hi >../outside.txt", "../outside.txt"),
        ("cd .. && ls", ".."),
    ],
)
def test_a_target_that_leaves_the_workspace_is_refused(
    ws: Path, sandbox: Sandbox, target: str, offender: str
):
    env = run_test(ws, sandbox, target)
    assert env == {"ok": False, "error": f"target leaves the workspace: {offender}", "data": None}
    assert (ws.parent / "outside.txt").read_text() == "keep me"


def test_system_executables_and_dev_null_are_fine_in_shell_strings(ws: Path, sandbox: Sandbox):
    env = run_test(ws, sandbox, "/usr/bin/env true 2>/dev/null && ls tests/test_x.py", timeout=10)
    assert env["ok"] and env["data"]["passed"], env


@pytest.mark.parametrize("target", ["", "   \n\t"])
def test_empty_target(ws: Path, sandbox: Sandbox, target: str):
    assert run_test(ws, sandbox, target) == {"ok": False, "error": "empty target", "data": None}


def test_bad_argument_types_are_envelopes(ws: Path, sandbox: Sandbox):
    assert run_test(ws, sandbox, 3)["error"] == "invalid arg: target (expected str, got int)"  # type: ignore[arg-type]
    assert run_test(ws, sandbox, "ls", timeout=0)["error"].startswith("invalid arg: timeout")
    assert run_test(ws / "missing", sandbox, "ls")["error"].startswith("workspace not found:")
    assert run_test(ws, sandbox, "echo 'unbalanced")["error"].startswith(
        "cannot parse shell target"
    )


def test_timeout_is_an_ok_envelope_that_did_not_pass(ws: Path, sandbox: Sandbox):
    env = run_test(ws, sandbox, "echo started; sleep 30", timeout=2)
    data = env["data"]
    assert env["ok"] and data["timed_out"] and not data["passed"]
    assert data["exit_code"] == 137 and "started" in data["output"]


def test_a_flood_of_output_returns_a_short_tail(ws: Path, sandbox: Sandbox):
    target = "python -c \"import sys; sys.stdout.write('y' * 100_000_000); print('the end')\""
    data = run_test(ws, sandbox, target, timeout=30)["data"]
    assert data["passed"] and data["output_truncated"]
    assert len(data["output"]) <= MAX_CHARS and data["output"].endswith("yythe end")
    marker = re.fullmatch(
        r"\[\.\.\. \d+ earlier lines and (\d+) bytes truncated \.\.\.\]",
        data["output"].splitlines()[0],
    )
    assert marker and int(marker[1]) > 98_000_000


def test_non_utf8_output_is_replaced_not_fatal(ws: Path, sandbox: Sandbox):
    data = run_test(ws, sandbox, r"printf 'ok \377\376 done'", timeout=10)["data"]
    assert data["passed"] and data["output"] == "ok \ufffd\ufffd done"


def test_tail_lines_keeps_the_last_lines_and_counts_the_rest():
    text = "\n".join(f"line {i}" for i in range(200))
    out, truncated = tail_lines(text)
    lines = out.splitlines()
    assert truncated and len(lines) == MAX_LINES
    assert lines[0] == "[... 151 earlier lines truncated ...]" and lines[-1] == "line 199"
    wide, _ = tail_lines("\n".join("z" * 300 for _ in range(20)))
    assert len(wide) <= MAX_CHARS and wide.splitlines()[0] == "[... 14 earlier lines truncated ...]"
    one, _ = tail_lines("q" * 5000)
    assert len(one) == MAX_CHARS and one.endswith("q" * 100)
    assert tail_lines("short\n") == ("short\n", False)
