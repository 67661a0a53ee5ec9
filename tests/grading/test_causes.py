"""The short cause a coverage table counts, from the reasons grading and builds really write."""

from __future__ import annotations

import pytest

from pytest_toolpolicy.grading.causes import cause_of


@pytest.mark.parametrize(
    ("status", "reason", "cause"),
    [
        ("resolved", None, ""),
        (
            "infra_error",
            "test_patch does not apply: error: patch failed",
            "test patch does not apply",
        ),
        ("infra_error", "no FAIL_TO_PASS id names a test file: test_a", "test ids name no file"),
        ("infra_error", "needs the network: t.py::test_get", "network"),
        ("unresolved", "x/tests/test_a.py::test_cdms2 skipped", "tests skipped"),
        (
            "infra_error",
            "instance a-1: the mirror /m/a lacks the contents of 1 file(s) of commit 0123 "
            "(big.dat): an incomplete mirror (a partial clone?); fetch the missing objects",
            "mirror incomplete",
        ),
        (
            "infra_error",
            "collection error in tests/test_x.py unrelated to the patch: ImportError: roman",
            "collection error",
        ),
        ("infra_error", "pytest could not run the tests (exit 4): usage", "runner did not start"),
        (
            "infra_error",
            "the test runner reported no test (exit 1): Traceback",
            "runner did not start",
        ),
        ("infra_error", "cannot run sympy's runner: no test command", "runner did not start"),
        ("infra_error", "grading run stopped: the workspace went over 512 MiB", "disk bound"),
        (
            "infra_error",
            "every listed test errors at setup: fixture 'x' not found",
            "shared setup error",
        ),
        (
            "infra_error",
            "sphinx-doc__sphinx-1: sphinx-doc/sphinx 7.2 needs the Debian package(s) graphviz, "
            "not installed here; install them: apt-get install graphviz",
            "system package missing",
        ),
        (
            "infra_error",
            "astropy__astropy-1: astropy/astropy 1.3 needs the git submodule(s) astropy_helpers",
            "submodule missing",
        ),
        (
            "infra_error",
            "x-1: the requirement files and pinned packages: No solution found when resolving",
            "dependency resolution",
        ),
        ("infra_error", "x-1: install command failed (exit 1):\nerror: gcc", "environment build"),
        ("infra_error", "x-1: install of the checkout: timed out after 1800s", "build timed out"),
        ("infra_error", "something no rule knows", "other"),
        ("unresolved", "tests/t.py::test_a failed; tests/t.py::test_b passed", "tests failed"),
        ("unresolved", "tests/t.py::test_a error", "tests errored"),
        ("unresolved", "tests/t.py::test_a missing", "tests missing"),
        ("unresolved", "timed out after 300s while running t.py::test_a", "timed out"),
        ("patch_error", "patch does not apply: error", "patch does not apply"),
        ("?", "KeyError: 'version'", "harness fault: KeyError"),
    ],
)
def test_cause_of(status: str, reason: str | None, cause: str) -> None:
    assert cause_of(status, reason) == cause
