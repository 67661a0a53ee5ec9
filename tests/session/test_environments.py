"""The session's environment stage (``session/environments.py``), end to end through ``pytester``
as a user runs it: an A/B session over a real repository of ours (built offline, its tests run
by its own runner: ``tests/envs/runner_repo.py``) resolves the environment once, before its
items, with a line as it starts and one as it ends; a plugin of the project's then makes the
builder raise while any item runs, and the session completes, each item handed its
environment."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from ..envs.runner_repo import INSTANCE, RunnerRepo, make_runner_repo
from ..sessions import ADDOPTS

# A plugin of the project's (``-p``: the shipped items are no conftest's): while an item runs
# (its call, the whole of run_item), entering the builder raises, and the entry is written
# down (in case something between swallowed the error).
REFUSE = """
import os

import pytest

from pytest_toolpolicy.envs import builder, cache


def _refuse(*args, **kwargs):
    with open(os.environ["BUILDER_ENTRIES"], "a") as out:
        out.write("entered\\n")
    raise RuntimeError("an item entered the environment builder")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    with open(os.environ["BUILDER_ENTRIES"] + ".items", "a") as out:
        out.write(item.nodeid + "\\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cache, "build_environment", _refuse)
        mp.setattr(builder.Builder, "__init__", _refuse)
        mp.setattr(builder, "build_sandbox", _refuse)
        return (yield)
"""
LINE = "toolpolicy environment: "


@pytest.fixture
def session(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> pytest.Pytester:
    pytester.makepyfile(refuse_builder=REFUSE)
    monkeypatch.setenv("BUILDER_ENTRIES", str(tmp_path / "entries"))
    monkeypatch.setenv("PYTEST_ADDOPTS", ADDOPTS)
    return pytester


def _run(pytester: pytest.Pytester, repo: RunnerRepo, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "--toolpolicy=ab", f"--toolpolicy-dataset={repo.data}", f"--toolpolicy-repos={repo.mirrors}",
        "--toolpolicy-model=sim:oracle", "--toolpolicy-report=report", "-p", "no:randomly",
        "-p", "refuse_builder", *args,
    )  # fmt: skip


def _entries(tmp_path: Path) -> tuple[list[str], list[str]]:
    """(the builder's entries while items ran, the items that ran)."""

    def lines(path: Path) -> list[str]:
        return path.read_text().splitlines() if path.exists() else []

    return lines(tmp_path / "entries"), lines(tmp_path / "entries.items")


def _stage_lines(result: pytest.RunResult) -> list[str]:
    return [line[len(LINE) :] for line in result.outlines if line.startswith(LINE)]


def test_the_environment_is_built_once_before_the_items_and_no_item_builds(
    session: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    repo = make_runner_repo(tmp_path / "repo")
    repo.use(monkeypatch, tmp_path / "cache")
    result = _run(session, repo, "-v")
    result.assert_outcomes(passed=2)
    what = rf"acme/runner 1\.0 @ {repo.base[:12]} \(1 instance\(s\)\)"
    started, ended = _stage_lines(result)
    assert re.fullmatch(rf"\[1/1\] {what} \.\.\.", started)
    assert re.fullmatch(rf"built   {what} [\d.]+s  acme__runner-1\.0-\w{{12}}", ended)
    # Before the first item, after pytest's "collected" line.
    outlines = result.outlines
    first_item = next(n for n, line in enumerate(outlines) if "test_instance[" in line)
    assert outlines.index(LINE + ended) < first_item
    entries, items = _entries(tmp_path)
    assert entries == [] and len(items) == 2  # the builder refused in both; none entered it
    rows = pd.read_parquet(session.path / "report" / "results.parquet")
    assert sorted(rows["arm"]) == ["current", "policy"] and rows["resolved"].all()
    # A resumed session runs nothing: it needs no environment.
    again = _run(session, repo, "--toolpolicy-resume")
    again.assert_outcomes(passed=2)
    assert _stage_lines(again) == []


def test_an_environment_that_cannot_be_had_fails_each_item_as_before(
    session: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    repo = make_runner_repo(tmp_path / "repo", pre_install="echo no wheel today >&2; exit 3")
    repo.use(monkeypatch, tmp_path / "cache")
    result = _run(session, repo)
    result.assert_outcomes(failed=2)
    assert _stage_lines(result)[1].startswith("failed  acme/runner 1.0 @ "), result.outlines
    rows = pd.read_parquet(session.path / "report" / "results.parquet")
    said = (
        rf"harness fault: EnvironmentSetupError: {INSTANCE}: environment acme__runner-1\.0-\w{{12}}"
        r" failed to build: pre_install `echo no wheel today >&2; exit 3` failed \(exit 3\)"
    )
    assert list(rows["status"]) == ["error", "error"]
    assert all(re.match(said, error) for error in rows["error"]), list(rows["error"])
    assert _entries(tmp_path)[0] == []


def test_a_bundled_session_has_no_stage(session: pytest.Pytester) -> None:
    result = session.runpytest_subprocess(
        "--toolpolicy=ab", "--toolpolicy-sample=1", "--toolpolicy-max-turns=3",
        "--toolpolicy-report=report", "-p", "no:randomly",
    )  # fmt: skip
    result.assert_outcomes(passed=2)
    assert _stage_lines(result) == []


@pytest.mark.slow  # a session under xdist (~10 s)
def test_under_xdist_the_controller_builds_and_each_worker_is_handed_it(
    session: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    repo = make_runner_repo(tmp_path / "repo")
    repo.use(monkeypatch, tmp_path / "cache")
    result = _run(session, repo, "-n", "2", "--toolpolicy-ablate=trigger.test")
    result.assert_outcomes(passed=3)
    started, ended = _stage_lines(result)  # the controller's, once
    assert started.startswith("[1/1] acme/runner 1.0 @ ") and ended.startswith("built   ")
    entries, items = _entries(tmp_path)
    assert entries == [] and len(items) == 3
    rows = pd.read_parquet(session.path / "report" / "results.parquet")
    assert rows["resolved"].all() and len(rows) == 3
