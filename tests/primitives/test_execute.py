"""execute: Python through stdin in a private directory, captured output, bad input."""

from __future__ import annotations

import re

import pytest

from pytest_toolpolicy.primitives.execute import MAX_CHARS, cap_text, execute
from pytest_toolpolicy.primitives.sandbox import Sandbox


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return Sandbox.from_env()


def test_streams_and_exit_code_are_captured(sandbox: Sandbox):
    code = "import sys\nprint('out')\nprint('err', file=sys.stderr)\nsys.exit(3)\n"
    env = execute(sandbox, code, timeout=10)
    assert env["ok"] and env["error"] is None
    assert env["data"] == {
        "stdout": "out\n",
        "stderr": "err\n",
        "exit_code": 3,
        "timed_out": False,
        "duration_s": env["data"]["duration_s"],
        "sandbox": sandbox.mode,
    }


def test_an_exception_is_an_ok_envelope_with_the_traceback(sandbox: Sandbox):
    data = execute(sandbox, "1 / 0", timeout=10)["data"]
    assert data["exit_code"] == 1 and data["stderr"].endswith(
        "ZeroDivisionError: division by zero\n"
    )


@pytest.mark.parametrize("code", ["", "  \n\t "])
def test_empty_code(sandbox: Sandbox, code: str):
    assert execute(sandbox, code) == {"ok": False, "error": "empty code", "data": None}


def test_bad_argument_types_are_envelopes(sandbox: Sandbox):
    assert execute(sandbox, None)["error"] == "invalid arg: code (expected str, got NoneType)"  # type: ignore[arg-type]
    assert execute(sandbox, "1", timeout=-1)["error"].startswith("invalid arg: timeout")


def test_code_larger_than_argv_limits_goes_through_stdin(sandbox: Sandbox):
    code = "s = '" + "a" * 300_000 + "'\nprint(len(s))\n"  # far beyond MAX_ARG_STRLEN (128 KiB)
    data = execute(sandbox, code, timeout=30)["data"]
    assert (data["stdout"], data["exit_code"]) == ("300000\n", 0)


def test_runs_in_a_private_empty_directory(sandbox: Sandbox):
    code = "import os; print(os.getcwd() == os.environ['TMPDIR'], os.listdir('.'))"
    assert execute(sandbox, code, timeout=10)["data"]["stdout"] == "True []\n"


def test_timeout(sandbox: Sandbox):
    data = execute(sandbox, "print('begun', flush=True)\nwhile True: pass", timeout=2)["data"]
    assert data["timed_out"] and data["exit_code"] == 137 and data["stdout"] == "begun\n"


def test_a_flood_of_output_is_capped(sandbox: Sandbox):
    code = "import sys\nsys.stdout.write('z' * 100_000_000)\nsys.stderr.write('tail')\n"
    data = execute(sandbox, code, timeout=30)["data"]
    assert data["exit_code"] == 0 and data["stderr"] == "tail"
    assert len(data["stdout"]) <= MAX_CHARS and data["stdout"].endswith("z" * 1000)
    assert (
        "chars truncated, and " in data["stdout"]
        and "bytes dropped at capture ...]" in data["stdout"]
    )


def test_non_utf8_output_is_replaced(sandbox: Sandbox):
    code = "import sys; sys.stdout.buffer.write(b'a\\xff\\xfeb'); sys.stderr.buffer.write(b'\\xc3')"
    data = execute(sandbox, code, timeout=10)["data"]
    assert (data["stdout"], data["stderr"]) == ("a\ufffd\ufffdb", "\ufffd")


def test_a_lone_surrogate_in_code_is_a_syntax_error_not_a_crash(sandbox: Sandbox):
    data = execute(sandbox, "print('\ud800')", timeout=10)["data"]
    assert data["exit_code"] == 1 and "SyntaxError" in data["stderr"]


def test_cap_text_keeps_both_ends_and_says_how_much_is_gone():
    text = "".join(f"{i:05d}\n" for i in range(5000))  # 30,000 chars
    capped = cap_text(text)
    assert len(capped) <= MAX_CHARS
    assert capped.startswith("00000\n") and capped.endswith("04999\n")
    marker = re.search(r"\n\[\.\.\. (\d+) chars truncated \.\.\.\]\n", capped)
    assert marker and len(capped) - len(marker[0]) + int(marker[1]) == len(text)
    assert cap_text("short") == "short"
