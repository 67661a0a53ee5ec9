"""A requirement file as SWE-bench's images install it."""

from __future__ import annotations

from pytest_toolpolicy.envs.requirements import swebench_requirements

FILES = {
    "requirements_test.txt": (
        "-r requirements_test_min.txt\n# a comment\n-e .\n.[testutils]\n"
        "coverage~=7.2\ntypes-pkg_resources==0.1.3\nastroid==3.0.0a9\n"
    ),
    "requirements_test_min.txt": "-e .[testutils]\npytest~=7.4\n# min\n",
}


def test_nested_first_then_own_lines_less_the_checkout_and_comments() -> None:
    text = swebench_requirements(FILES.get, "requirements_test.txt")
    assert [line for line in text.split("\n") if line] == [
        "pytest~=7.4",
        "coverage~=7.2",
        "types-setuptools",  # types-pkg_resources is yanked: SWE-bench's replacement
        "astroid==3.0.0a9",
    ]


def test_a_nested_file_relative_to_its_folder_and_a_missing_one() -> None:
    files = {"tests/requirements/py3.txt": "-r base.txt\n-r gone.txt\nPillow>=6.2\n"}
    files["tests/requirements/base.txt"] = "asgiref>=3.2\n"
    text = swebench_requirements(files.get, "tests/requirements/py3.txt")
    assert [line for line in text.split("\n") if line] == ["asgiref>=3.2", "Pillow>=6.2"]
    assert swebench_requirements(files.get, "none.txt") == ""
