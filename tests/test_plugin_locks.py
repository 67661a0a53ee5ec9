"""Sessions on one machine never wait on each other in silence, end to end through
``pytester``: an item whose lock another process holds says who holds it in the progress lines
and fails past its bound; two report directories run the same item side by side; and the
suite's own sessions run their items under a root of their own (tests/conftest.py), never where
a user's sessions do. "Another process" is this test process, holding the lock as a session
would (its pid is the one to be named)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from pytest_toolpolicy.paths import safe_name
from pytest_toolpolicy.run.itemdir import (
    LOCK_WAIT_ENV,
    WORKDIR_ENV,
    default_workdir,
    held,
    lock_path,
    report_root,
)

TEST_AB = Path(__file__).parents[1] / "evals" / "test_ab.py"
# One item: the policy arm on one instance, three turns.
ONE = [
    "--toolpolicy=policy", "--toolpolicy-sample=1", "--toolpolicy-seed=3",
    "--toolpolicy-max-turns=3", "--toolpolicy-no-view", "-p", "no:randomly",
    "-p", "no:cacheprovider",
]  # fmt: skip


@pytest.fixture
def evals(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(test_ab=TEST_AB.read_text(encoding="utf-8"))
    return pytester


def _item(evals: pytest.Pytester) -> str:
    result = evals.runpytest("--collect-only", "-q", *ONE)
    (item,) = [line.split("[", 1)[1][:-1] for line in result.outlines if "test_instance[" in line]
    return item


def _directory(report: Path, item: str, workdir: Path | None = None) -> Path:
    """Where a session of ``report`` runs ``item`` (its root made, as a session makes it)."""
    root = report_root(workdir or Path(os.environ[WORKDIR_ENV]), report.resolve())
    if workdir is None:
        root.mkdir(parents=True, exist_ok=True)
    return root / safe_name(item)


@pytest.mark.parametrize(
    "workers",
    [pytest.param((), id="serial"), pytest.param(("-n", "1"), id="xdist", marks=pytest.mark.slow)],
)
def test_an_item_whose_lock_is_held_says_by_whom_and_fails_past_its_bound(
    evals: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, workers: tuple[str, ...]
) -> None:
    report = evals.path / "report"
    item = _item(evals)
    monkeypatch.setenv(LOCK_WAIT_ENV, "4")
    with held(_directory(report, item), item=item):
        result = evals.runpytest_subprocess(*ONE, f"--toolpolicy-report={report}", *workers)
    result.assert_outcomes(failed=1)
    said = re.compile(
        rf"toolpolicy: waiting for {re.escape(item)} held by pid {os.getpid()}"
        r" since \d\d:\d\d:\d\d"
    )
    assert any(said.fullmatch(line) for line in result.outlines), result.stdout.str()[-3000:]
    out = result.stdout.str()
    assert f"ItemLockTimeout: {item}: waited 4 s (TOOLPOLICY_LOCK_WAIT)" in out
    assert f"held by pid {os.getpid()} since " in out


def test_two_report_directories_run_the_same_item_side_by_side(
    evals: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    item = _item(evals)
    monkeypatch.setenv(LOCK_WAIT_ENV, "30")  # a regression fails here, never hangs
    with held(_directory(evals.path / "first", item), item=item):  # a session of "first" runs it
        result = evals.runpytest_subprocess(*ONE, f"--toolpolicy-report={evals.path / 'second'}")
    result.assert_outcomes(passed=1)
    assert "waiting for" not in result.stdout.str()


def test_the_suites_sessions_run_their_items_under_a_root_of_their_own(
    evals: pytest.Pytester,
) -> None:
    root = Path(os.environ[WORKDIR_ENV])
    assert root.is_dir() and root != default_workdir()
    assert root.name.startswith("toolpolicy-tests-workdir-")
    report = evals.path / "report"
    item = _item(evals)
    result = evals.runpytest_subprocess(*ONE, f"--toolpolicy-report={report}")
    result.assert_outcomes(passed=1)
    assert lock_path(_directory(report, item)).is_file()  # it ran here, under the suite's root
    assert not lock_path(_directory(report, item, default_workdir())).exists()  # not the user's
