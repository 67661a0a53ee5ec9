from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_toolpolicy.grading.directives import (
    NON_TEST_SUFFIXES,
    django_label,
    django_module,
    grading_directives,
    patch_test_files,
    pytest_target,
    runner_args,
    swebench_directives,
)


def diff(*paths: str) -> str:
    """A test_patch touching ``paths`` (one hunk each)."""
    return "".join(
        f"diff --git a/{p} b/{p}\n--- a/{p}\n+++ b/{p}\n@@ -1 +1,2 @@\n x\n+y\n" for p in paths
    )


DJANGO_PATCH = diff(
    "tests/auth_tests/test_validators.py",
    "tests/template_tests/templates/base.html",
    "tests/runtests_fixtures.json",
    "tests/migrations/test_migrations_squashed/0001_initial.py",
)
SYMPY_PATCH = diff("sympy/utilities/tests/test_iterables.py", "sympy/core/tests/test_basic.py")


def swebench_directives_reference(test_patch: str, django: bool) -> list[str]:
    """SWE-bench's ``get_test_directives`` (harness/test_spec/python.py), transcribed."""
    directives = re.findall(r"diff --git a/.* b/(.*)", test_patch)
    directives = [d for d in directives if not any(d.endswith(e) for e in NON_TEST_SUFFIXES)]
    if django:
        transformed = []
        for d in directives:
            d = d[: -len(".py")] if d.endswith(".py") else d
            d = d[len("tests/") :] if d.startswith("tests/") else d
            transformed.append(d.replace("/", "."))
        directives = transformed
    return directives


def test_django_runs_the_modules_test_patch_touches() -> None:
    assert swebench_directives("django", DJANGO_PATCH) == [
        "auth_tests.test_validators",
        "template_tests.templates.base.html",  # a label runtests.py cannot import, as in SWE-bench
        "migrations.test_migrations_squashed.0001_initial",
    ]
    assert django_module("tests/foo/tests.py") == "foo.tests"
    assert django_module("django/test/utils.py") == "django.test.utils"


def test_sympy_runs_the_files_test_patch_touches() -> None:
    assert grading_directives("sympy", ["test_uniq"], SYMPY_PATCH) == [
        "sympy/utilities/tests/test_iterables.py",
        "sympy/core/tests/test_basic.py",
    ]


def test_pytest_repositories_run_the_files_the_ids_name() -> None:
    ids = [
        "tests/test_a.py::test_x[a",
        "tests/test_a.py::T::test_y",
        "tests/test_b.py",
        "[100%]",  # the progress line of an inner run: no file
        "[2]",
    ]
    expected = ["tests/test_a.py", "tests/test_b.py"]
    assert grading_directives("pytest_options", ids, diff("tests/conftest.py")) == expected


@given(
    st.lists(
        st.sampled_from(
            ["diff --git a/", " b/", "x.py", "y.txt", "csv", "tests/", "a b", "\n", " ", "/", "+"]
        ),
        max_size=30,
    ).map("".join),
    st.booleans(),
)
def test_the_patch_is_read_as_swebench_reads_it(test_patch: str, django: bool) -> None:
    parser = "django" if django else "sympy"
    expected = swebench_directives_reference(test_patch, django)
    assert swebench_directives(parser, test_patch) == list(dict.fromkeys(expected))


def test_a_patch_line_is_read_where_swebench_reads_it() -> None:
    # unanchored, the last " b/" of the line: a hunk's text counts too
    patch = "+    print('diff --git a/x.py b/y b/z.py')\ndiff --git a/p q.py b/p q.py\n"
    assert patch_test_files(patch) == ["z.py')", "p q.py"]
    assert swebench_directives_reference(patch, django=False) == ["z.py')", "p q.py"]


@pytest.mark.parametrize(
    ("parser", "test_id", "target"),
    [
        ("pytest", "t.py::T::test_a", "t.py::T::test_a"),
        ("pytest", "t.py::test_a[x-y]", "t.py::test_a[x-y]"),
        ("pytest", "t.py::test_a[a", "t.py::test_a"),  # "[a b]" cut at the space
        ("seaborn", "t.py::test_a[a", "t.py::test_a"),
        ("pytest_options", "t.py::test_a[/y.txt]", "t.py::test_a"),  # "/tmp/x/y.txt" shortened
        ("pytest_options", "t.py::test_a[//net/y]", "t.py::test_a[//net/y]"),
        ("pytest_options", "t.py::test_a[/tmp/*.txt]", "t.py::test_a[/tmp/*.txt]"),
        ("pytest", "t.py::test_a[/y.txt]", "t.py::test_a[/y.txt]"),
        ("matplotlib", "t.py::test_a[1]", "t.py::test_a"),  # MouseButton.LEFT, or 1
        ("matplotlib", "t.py::test_a[png-3]", "t.py::test_a"),
        ("matplotlib", "t.py::test_a[png-13]", "t.py::test_a[png-13]"),
        ("pytest_v2", "t.py::test_a[1]", "t.py::test_a[1]"),
        ("pytest", "t.py", "t.py"),
        ("pytest", "[100%]", None),
    ],
)
def test_a_listed_pytest_id_runs_as_a_node_id(parser: str, test_id: str, target: str) -> None:
    assert pytest_target(test_id, parser) == target


def test_run_test_arguments_for_pytest_ids() -> None:
    ids = ["t.py::test_a[a", "t.py::test_a[b", "t.py::test_b", "[100%]"]
    assert runner_args("pytest", ids) == ["t.py::test_a", "t.py::test_b"]


@pytest.mark.parametrize(
    ("test_id", "label"),
    [
        ("test_ascii (auth_tests.test_validators.UsernameTests)", "auth_tests.test_validators.UsernameTests.test_ascii"),
        # Python 3.11 and later: the method's name is part of the class path
        ("test_ascii (auth_tests.test_validators.UsernameTests.test_ascii)", "auth_tests.test_validators.UsernameTests.test_ascii"),
        ("test_sub (m.tests.T.test_sub) (value=2)", "m.tests.T.test_sub"),
        ("test_sub (m.tests.T) [message] (value=2)", "m.tests.T.test_sub"),
        ("A docstring's first line (not a class).", None),
        ("--version is equivalent to version", None),
    ],
)  # fmt: skip
def test_a_django_id_names_its_test(test_id: str, label: str | None) -> None:
    assert django_label(test_id) == label


def test_run_test_arguments_for_django_ids() -> None:
    named = ["test_a (m.tests.T)", "test_b (m.tests.T)", "test_a (m.tests.T)"]
    assert runner_args("django", named, DJANGO_PATCH) == ["m.tests.T.test_a", "m.tests.T.test_b"]
    # an id that names no class runs test_patch's modules
    docstring = [*named, "Regression for #12345: the thing."]
    assert runner_args("django", docstring, DJANGO_PATCH) == [
        "m.tests.T.test_a",
        "m.tests.T.test_b",
        *swebench_directives("django", DJANGO_PATCH),
    ]


def test_run_test_arguments_for_sympy_ids() -> None:
    assert runner_args("sympy", ["test_uniq", "test_partitions", "test_uniq"], SYMPY_PATCH) == [
        "sympy/utilities/tests/test_iterables.py",
        "sympy/core/tests/test_basic.py",
        "-k",  # bin/test's -k takes every word after it, so it comes last
        "test_uniq",
        "test_partitions",
    ]
    assert runner_args("sympy", [], SYMPY_PATCH) == swebench_directives("sympy", SYMPY_PATCH)


def test_an_unknown_parser_is_refused() -> None:
    for call in (
        lambda: runner_args("unittest", ["x"]),
        lambda: grading_directives("unittest", ["x"], ""),
        lambda: swebench_directives("unittest", ""),
    ):
        with pytest.raises(ValueError, match="'unittest' is not one of pytest"):
            call()
