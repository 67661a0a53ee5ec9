"""The checkout's own requirements read from pip's dry-run report (``project_requires.py``):
markers decided as pip decides them for that install, anything else refused."""

from __future__ import annotations

import json

import pytest

from pytest_toolpolicy.envs.project_requires import UnreadableReport, requirement_lines

ENVIRONMENT = {
    "implementation_name": "cpython",
    "os_name": "posix",
    "platform_machine": "x86_64",
    "platform_system": "Linux",
    "python_full_version": "3.10.14",
    "python_version": "3.10",
    "sys_platform": "linux",
}


def report(requires: list[str], extras: list[str] | None = None, **item: object) -> str:
    """pip's installation report (version 1) of one project, as ``--report`` writes it."""
    entry: dict[str, object] = {
        "metadata": {"name": "app", "version": "0.0.0", "requires_dist": requires},
        "is_direct": True,
        **item,
    }
    if extras is not None:
        entry["requested_extras"] = extras
    return json.dumps({"version": "1", "install": [entry], "environment": ENVIRONMENT})


def test_markers_are_decided_for_the_reports_interpreter() -> None:
    requires = [
        "numpy>=1.18",
        "pandas>=1.1 ; python_version >= '3.8'",
        "importlib-metadata ; python_version < '3.8'",
        "pywin32 ; sys_platform == 'win32'",
        "packaging>=20.0",
    ]
    assert requirement_lines(report(requires)) == ["numpy>=1.18", "pandas>=1.1", "packaging>=20.0"]


def test_requirements_of_an_extra_only_when_it_is_asked_for() -> None:
    requires = [
        "docutils<0.18",
        "pytest ; extra == 'test'",
        "cython ; extra == 'test' and python_version >= '3.8'",
        "sphinx-rtd-theme ; extra == 'docs'",
    ]
    assert requirement_lines(report(requires)) == ["docutils<0.18"]
    assert requirement_lines(report(requires, ["test"])) == ["docutils<0.18", "pytest", "cython"]
    both = requirement_lines(report(requires, ["test", "docs"]))
    assert both == ["docutils<0.18", "pytest", "cython", "sphinx-rtd-theme"]


def test_extras_and_urls_of_a_requirement_are_kept() -> None:
    requires = ["dask[array,dataframe]>=2.0", "lib @ https://example.org/lib-1.0.tar.gz"]
    assert requirement_lines(report(requires)) == [
        "dask[array,dataframe]>=2.0",
        "lib @ https://example.org/lib-1.0.tar.gz",
    ]


def test_a_project_that_requires_nothing() -> None:
    assert requirement_lines(report([])) == []
    no_key = json.loads(report([]))
    del no_key["install"][0]["metadata"]["requires_dist"]
    assert requirement_lines(json.dumps(no_key)) == []


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("not json", "not JSON"),
        ("[]", "no 'install' list"),
        (json.dumps({"install": []}), "0 items to install"),
        (json.dumps({"install": [{}, {}]}), "2 items to install"),
        (json.dumps({"install": [{"metadata": {}}]}), "no metadata or environment"),
        (report(["numpy >= = 1"]), "requirement 'numpy >= = 1'"),
        (report(["numpy ; python_version >= '3' and nonsense"]), "Expected a marker variable"),
        (report("numpy"), "requires_dist or requested_extras is not a list"),  # type: ignore[arg-type]
    ],
)
def test_what_is_not_a_report_of_one_project(text: str, why: str) -> None:
    with pytest.raises(UnreadableReport, match=why.replace("[", r"\[")):
        requirement_lines(text)
