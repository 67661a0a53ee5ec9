"""The A/B items the plugin ships: a project with none of its own collects them with
``--toolpolicy``, selects among them with ``-k``, and collects none without the option."""

from __future__ import annotations

import pytest


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A user's project: one unrelated test and no copy of ``evals/test_ab.py``."""
    pytester.makepyfile(test_mine="def test_mine():\n    assert 1 + 1 == 2\n")
    return pytester


def test_the_items_come_with_the_plugin(project: pytest.Pytester) -> None:
    result = project.runpytest_subprocess(
        "--toolpolicy=ab", "--toolpolicy-sample=2", "--toolpolicy-seed=3", "--collect-only", "-q"
    )
    lines = [line for line in result.stdout.lines if "::" in line]
    shipped = [line for line in lines if line.startswith("toolpolicy::test_instance[")]
    assert len(shipped) == 4 and "test_mine.py::test_mine" in lines
    assert {line.rsplit("-", 1)[1] for line in shipped} == {"policy]", "current]"}


def test_k_selects_and_the_run_reports_a_table(project: pytest.Pytester) -> None:
    report = project.path / "report"
    result = project.runpytest_subprocess(
        "--toolpolicy=policy",
        "--toolpolicy-sample=1",
        "--toolpolicy-seed=3",
        f"--toolpolicy-report={report}",
        "-k",
        "test_instance",
    )
    result.assert_outcomes(passed=1, deselected=1)
    result.stdout.fnmatch_lines(["*toolpolicy decision*", "*policy *"])
    assert (report / "decision.csv").is_file()


def test_without_the_option_nothing_is_added(project: pytest.Pytester) -> None:
    result = project.runpytest_subprocess("--collect-only", "-q")
    assert not [line for line in result.stdout.lines if line.startswith("toolpolicy::")]
    result.stdout.fnmatch_lines(["test_mine.py::test_mine"])


def test_a_path_on_the_command_line_runs_only_what_it_names(project: pytest.Pytester) -> None:
    result = project.runpytest_subprocess(
        "--toolpolicy=ab", "--toolpolicy-sample=1", "test_mine.py", "--collect-only", "-q"
    )
    assert not [line for line in result.stdout.lines if line.startswith("toolpolicy::")]
    result.stdout.fnmatch_lines(["test_mine.py::test_mine"])
