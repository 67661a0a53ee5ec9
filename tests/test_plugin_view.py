"""The A/B session builds the viewer's site and ends its summary with where it is."""

from __future__ import annotations

import pytest

SHORT = [
    "--toolpolicy=ab",
    "--toolpolicy-sample=1",
    "--toolpolicy-max-turns=2",
    "-p",
    "no:randomly",
]


@pytest.mark.slow  # tests/view/test_site.py reads the same line off its shared session
def test_the_summary_ends_with_the_viewers_index(pytester: pytest.Pytester) -> None:
    report = pytester.path / "report"
    result = pytester.runpytest_subprocess(*SHORT, f"--toolpolicy-report={report}")
    result.assert_outcomes(passed=2)
    last = result.stdout.lines[-2]  # before pytest's own "2 passed in ..."
    assert last.startswith(f"toolpolicy viewer: {report / 'view' / 'index.html'} ("), last
    index = (report / "view" / "index.html").read_text(encoding="utf-8")
    assert "decision table" in index
    assert len(list((report / "view" / "i").iterdir())) == 1


@pytest.mark.slow  # a second A/B run, for an option: ~8 s
def test_no_view_builds_none(pytester: pytest.Pytester) -> None:
    report = pytester.path / "report"
    result = pytester.runpytest_subprocess(
        *SHORT, f"--toolpolicy-report={report}", "--toolpolicy-no-view"
    )
    result.assert_outcomes(passed=2)
    assert not (report / "view").exists()
    assert "toolpolicy viewer:" not in result.stdout.str()
