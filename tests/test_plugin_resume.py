"""``--toolpolicy-resume`` with ``-k``: the report holds every finished item of the report
directory, an earlier session's and this one's; without it, a session reports its own rows and
deletes nothing. End to end, through ``pytester``, under ``sim``."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from .test_plugin_ab import SAMPLE, SHORT, TEST_AB

# The policy item of one instance fails as a harness fault would (its row is kept, status error).
FAULT = """
import pytest_toolpolicy.run.item as item

real = item._run_item

def broken(spec, harness, directory):
    if spec.variant == "policy" and spec.instance_id == "{instance}":
        raise RuntimeError("workspace exploded")
    return real(spec, harness, directory)

item._run_item = broken
"""


@pytest.fixture
def evals(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(test_ab=TEST_AB.read_text(encoding="utf-8"))
    return pytester


def _run(evals: pytest.Pytester, *args: str) -> pytest.RunResult:
    report = evals.path / "report"
    return evals.runpytest_subprocess(
        "--toolpolicy=ab", SHORT, *SAMPLE, "-p", "no:cacheprovider",
        f"--toolpolicy-report={report}", *args,
    )  # fmt: skip


def _instances(evals: pytest.Pytester) -> list[str]:
    result = evals.runpytest("--collect-only", "-q", "--toolpolicy=ab", *SAMPLE)
    ids = [
        line.split("[", 1)[1][: -len("-current]")]
        for line in result.outlines
        if "-current]" in line
    ]
    assert len(ids) == 2
    return ids


def _report(evals: pytest.Pytester) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """results.parquet by item, decision.csv, and the items of trajectories.jsonl."""
    report = evals.path / "report"
    results = pd.read_parquet(report / "results.parquet").set_index("item")
    table = pd.read_csv(report / "decision.csv", index_col=0)
    lines = (report / "trajectories.jsonl").read_text(encoding="utf-8").splitlines()
    items = [f"{t['instance_id']}-{t['variant']}" for t in map(json.loads, lines)]
    return results, table, items


def test_a_resumed_k_run_reports_every_finished_item_of_the_directory(
    evals: pytest.Pytester,
) -> None:
    """The user's case: the policy items ran first, then `-k current --toolpolicy-resume`
    decided with only its own items ("the policy arm was not run"). Now the second session's
    table, results, decision and viewer hold all four, and a record that cannot be read is
    named, not lost silently."""
    a, b = _instances(evals)
    first = _run(evals, "-k", "policy")
    assert first.ret == pytest.ExitCode.OK, first.stdout.str()[-3000:]
    items = evals.path / "report" / "items"
    (items / "by-hand.json").write_text("{not json", encoding="utf-8")

    second = _run(evals, "-k", "current", "--toolpolicy-resume")
    assert second.ret == pytest.ExitCode.OK, second.stdout.str()[-3000:]
    out = second.stdout.str()
    assert "the policy arm was not run" not in out
    second.stdout.fnmatch_lines(
        [
            "toolpolicy: 1 record(s) in *items could not be read, left out of the report:"
            " by-hand.json",
            "*2 passed, 2 deselected*",  # the current items ran; the policy ones were not collected
        ]
    )
    results, table, traced = _report(evals)
    every = {f"{i}-{v}" for i in (a, b) for v in ("current", "policy")}
    assert set(results.index) == every and set(traced) == every
    assert set(results["status"]) == {"ok"}
    # The policy rows are the first session's, marked resumed; the current rows ran now.
    assert results["resumed"].fillna(False).astype(bool).to_dict() == {
        item: item.endswith("-policy") for item in every
    }
    assert {"current", "policy"} <= set(table.index)
    assert str(table.loc["policy", "verdict"]).startswith(("ADOPT", "NOT ADOPTED"))
    view = (evals.path / "report" / "view").rglob("*.html")
    pages = "".join(page.read_text(encoding="utf-8") for page in view)
    assert all(item in pages for item in every)


@pytest.mark.slow  # four sessions: ~30 s
def test_this_sessions_row_replaces_the_earlier_one_and_without_resume_nothing_is_merged(
    evals: pytest.Pytester,
) -> None:
    a, b = _instances(evals)
    evals.makeconftest(FAULT.format(instance=a))
    faulted = _run(evals, "-k", "policy")
    assert faulted.ret == pytest.ExitCode.TESTS_FAILED  # the harness fault fails its item
    (evals.path / "conftest.py").unlink()

    resumed = _run(evals, "-k", "current", "--toolpolicy-resume")
    assert resumed.ret == pytest.ExitCode.OK, resumed.stdout.str()[-3000:]
    results, _, _ = _report(evals)
    assert len(results) == 4
    assert results.loc[f"{a}-policy", "status"] == "error"  # kept and shown, not measured
    assert "workspace exploded" in results.loc[f"{a}-policy", "error"]
    resumed.stdout.fnmatch_lines(["*not measured: 1 of 4 items*"])

    # A harness fault is not a finished item: resumed, it runs again, and its row replaces
    # the earlier one; the other policy item is not run again.
    again = _run(evals, "-k", "policy", "--toolpolicy-resume")
    assert again.ret == pytest.ExitCode.OK, again.stdout.str()[-3000:]
    results, _, traced = _report(evals)
    assert len(results) == 4 and set(results["status"]) == {"ok"}
    assert sorted(traced) == sorted(results.index)
    resumed_now = results["resumed"].fillna(False).astype(bool)
    assert not resumed_now[f"{a}-policy"] and resumed_now[f"{b}-policy"]

    # Without --toolpolicy-resume, the report is the session's own rows, and nothing earlier
    # is deleted.
    own = _run(evals, "-k", f"{a} and current")
    assert own.ret == pytest.ExitCode.OK, own.stdout.str()[-3000:]
    results, _, traced = _report(evals)
    assert list(results.index) == traced == [f"{a}-current"]
    assert len(list((evals.path / "report" / "items").glob("*.json"))) == 4
    own.stdout.fnmatch_lines(["1 instance (* under-specified) of 2 loaded, seed 3;*"])


def test_the_store_lists_every_record_and_names_those_it_cannot_read(tmp_path: Path) -> None:
    """``ItemStore.records`` names each file it cannot read, and skips writes in flight."""
    from pytest_toolpolicy.session.store import ItemStore

    store = ItemStore(tmp_path)
    store.save("x-current", {"instance_id": "x", "variant": "current", "status": "ok"}, None)
    (store.directory / "broken.json").write_text("[1, 2]", encoding="utf-8")
    (store.directory / "no-row.json").write_text('{"item": "y-policy"}', encoding="utf-8")
    (store.directory / ".tmp-abc.json").write_text("{", encoding="utf-8")
    found = {path.name: record for path, record in store.records()}
    assert set(found) == {"x-current.json", "broken.json", "no-row.json"}
    assert found["broken.json"] is None and found["no-row.json"] is None
    assert (found["x-current.json"] or {})["row"]["variant"] == "current"
    rows, unreadable = store.rows()
    assert list(rows) == ["x-current"] and rows["x-current"][0]["status"] == "ok"
    assert unreadable == ["broken.json", "no-row.json"]
