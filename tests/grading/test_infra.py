"""Whose a failure is: the patch's or the environment's, from what the run printed."""

from __future__ import annotations

import pytest

from pytest_toolpolicy.grading.infra import blames_patch, lacking_module
from pytest_toolpolicy.grading.outcomes import Failure

TOUCHED = {"tests/test_util.py", "sphinx/util/nodes.py"}
ROOTS = ("/tmp/ws-1", "/testbed")


@pytest.mark.parametrize(
    ("text", "blamed"),
    [
        # a name the repository's own module lacks: what the patch should have added
        (
            "tests/test_util.py:3: in <module>\nImportError: cannot import name 'split_explicit' "
            "from 'sphinx.util.nodes' (/testbed/sphinx/util/nodes.py)",
            True,
        ),
        # a name an installed package lacks (docutils 0.23 dropped it): the environment's
        (
            "tests/test_util.py:3: in <module>\nImportError: cannot import name 'roman' from "
            "'docutils.utils' (/env/venv/lib/python3.9/site-packages/docutils/utils/__init__.py)",
            False,
        ),
        # a compiled module built for another tree
        (
            "tests/test_util.py:1: in <module>\nImportError: /testbed/astropy/_erfa/ufunc."
            "cpython-39-x86_64-linux-gnu.so: undefined symbol: eraPvtob",
            False,
        ),
        ("ImportError: libenchant-2.so.2: cannot open shared object file: No such file", False),
        # a dependency that is not installed, imported from a touched file
        ("tests/test_util.py:1: in <module>\nModuleNotFoundError: No module named 'roman'", False),
        ("tests/test_util.py:9: in test_x\nAssertionError", True),
        ("collected 0 items / 1 error", False),
    ],
)
def test_whose_failure(text: str, blamed: bool) -> None:
    assert blames_patch(text, TOUCHED, ROOTS) is blamed


def test_without_roots_an_import_from_anywhere_names_a_touched_file() -> None:
    text = "tests/test_util.py:3\nImportError: cannot import name 'x' from 'docutils' (/v/d.py)"
    assert blames_patch(text, TOUCHED)  # callers that cannot say where the workspace is


@pytest.mark.parametrize(
    ("message", "touched", "lacking"),
    [
        ("could not import 'cdms2': No module named 'cdms2'", (), "cdms2"),
        ("Skipped: requires cdms2", (), "cdms2"),
        ("requires scipy.sparse", (), None),  # scipy is installed
        ("requires cdms2", ("cdms2.py",), None),  # the patch's own module
        ("No module named 'cf_units.x'", (), "cf_units.x"),
        ("requires a newer numpy", (), None),
        ("flaky on CI", (), None),
    ],
)
def test_what_a_skip_lacks(message: str, touched: tuple[str, ...], lacking: str | None) -> None:
    failure = Failure("call", message, "")
    assert lacking_module(failure, touched, {"scipy", "numpy"}) == lacking
