"""No finished result is ever lost, bad input is refused before anything runs, and the plugin
turns on only by its option: the A/B session end to end through ``pytester``.

The runs that write a report run in a subprocess (pandas' parquet engine registers its pyarrow
types once per process, which an in-process run would repeat), and ``results.parquet`` is read
here with pyarrow alone (pytester unloads, after each test, what pandas imported to read it);
the runs that stop at configure run in process. ``sim`` on one sampled instance keeps each run
to a few seconds.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from pytest_toolpolicy.decide.variants import ItemSpec
from pytest_toolpolicy.paths import safe_name
from pytest_toolpolicy.run.itemdir import lock_path
from pytest_toolpolicy.session.store import claim

TEST_AB = Path(__file__).parents[1] / "evals" / "test_ab.py"
# One instance, both arms. Three turns: these tests are about what happens to results, not about
# resolving; a run that ends unresolved is measured without counterfactual reruns (~4x faster).
ONE = [
    "--toolpolicy-sample=1",
    "--toolpolicy-seed=3",
    "--toolpolicy-max-turns=3",
    "-p",
    "no:randomly",
]


@pytest.fixture
def evals(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(test_ab=TEST_AB.read_text(encoding="utf-8"))
    return pytester


def _results(report: Path) -> list[dict[str, Any]]:
    return pq.read_table(report / "results.parquet").to_pylist()


def _snapshot(directory: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(p.relative_to(directory)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def _items(report: Path) -> dict[str, tuple[bytes, int]]:
    return {k: v for k, v in _snapshot(report).items() if k.startswith("items/")}


# -- 1. never delete on start ---------------------------------------------------------------


@pytest.mark.slow  # three A/B sessions in a row: ~20 s
def test_collect_only_and_k_change_nothing_of_the_other_items(evals: pytest.Pytester) -> None:
    report = evals.path / "report"
    args = ["--toolpolicy=ab", f"--toolpolicy-report={report}", *ONE]
    evals.runpytest_subprocess(*args).assert_outcomes(passed=2)
    before = _snapshot(report)
    assert len(_items(report)) == 2 and "memo.sqlite" in before

    collected = evals.runpytest_subprocess(*args, "--collect-only", "-q")
    assert collected.ret == pytest.ExitCode.OK
    assert "toolpolicy" not in collected.stdout.str()
    assert _snapshot(report) == before  # not one byte, not one mtime

    evals.runpytest_subprocess(*args, "-k", "current").assert_outcomes(passed=1, deselected=1)
    after = _items(report)
    assert set(after) == {k for k in before if k.startswith("items/")}
    (policy,) = [k for k in after if k.endswith("-policy.json")]
    (current,) = [k for k in after if k.endswith("-current.json")]
    assert after[policy] == before[policy]  # the deselected item's result is untouched
    assert after[current][0] != before[current][0]  # the item that ran again replaced its own
    assert (report / "memo.sqlite").exists()
    # This session's report is this session's rows: the one item it ran.
    assert [r["variant"] for r in _results(report)] == ["current"]


# -- 2. one session per report directory ----------------------------------------------------


def test_a_second_session_on_the_same_report_directory_is_a_usage_error(
    evals: pytest.Pytester,
) -> None:
    report = evals.path / "report"
    report.mkdir()
    args = ["--toolpolicy=ab", f"--toolpolicy-report={report}", *ONE]
    held = claim(report)  # this process is the first session
    try:
        refused = evals.runpytest(*args)
        assert refused.ret == pytest.ExitCode.USAGE_ERROR
        refused.stderr.fnmatch_lines(
            [f"*--toolpolicy-report {report}: another session (pid {os.getpid()})*"
             f"*--toolpolicy-report DIR*"]
        )  # fmt: skip
        assert evals.runpytest(*args, "--collect-only").ret == pytest.ExitCode.OK
    finally:
        held.close()
    # Free again, and a session that ends gives it back (an in-process run included).
    assert evals.runpytest(*args, "-k", "nothing_matches").ret == pytest.ExitCode.NO_TESTS_COLLECTED
    claim(report).close()


# -- 3. unwritable report directory, failed saves -------------------------------------------


def _unwritable() -> list[tuple[str, str]]:
    cases = [("{tmp}/a-file/report", "Not a directory")]
    if Path("/sys/kernel").is_dir():  # sysfs refuses new entries, even to root
        cases.append(("/sys/kernel/toolpolicy-report", "Operation not permitted"))
    return cases


@pytest.mark.parametrize(("path", "reason"), _unwritable())
def test_an_unwritable_report_directory_is_a_usage_error(
    evals: pytest.Pytester, path: str, reason: str
) -> None:
    (evals.path / "a-file").write_text("a regular file, not a directory")
    report = path.format(tmp=evals.path)
    result = evals.runpytest("--toolpolicy=ab", f"--toolpolicy-report={report}", *ONE)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--toolpolicy-report {report}: cannot write to *: {reason}*"])
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


FULL_DISK = """
import errno, os
import pytest_toolpolicy.session.store as store

def full(path, write):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

store.write_atomic = full
"""


@pytest.mark.parametrize(
    "workers",
    [[], pytest.param(["-n", "1"], marks=pytest.mark.slow)],  # xdist: ~17 s, in test-slow
    ids=["serial", "xdist"],
)
def test_a_failed_save_is_reported_and_the_row_still_reaches_the_table(
    evals: pytest.Pytester, workers: list[str]
) -> None:
    """A full disk under items/ (the report files still write). Serial, each item fails with the
    path and the error; under xdist the worker has handed its record over already and the
    controller, which saves it, names each failed save and exits 1. Either way every row and
    trajectory reaches the report."""
    evals.makeconftest(FULL_DISK)
    report = evals.path / "report"
    result = evals.runpytest_subprocess(
        "--toolpolicy=ab", f"--toolpolicy-report={report}", *workers, "-rf", *ONE
    )
    saved = (
        f"*-current: could not save its result to {report}/items/*-current.json:"
        " [[]Errno 28[]] No space left on device*"
    )
    if workers:
        result.assert_outcomes(passed=2)
        assert result.ret == pytest.ExitCode.TESTS_FAILED
        result.stdout.fnmatch_lines(["*toolpolicy decision*", f"toolpolicy: {saved}"])
    else:
        result.assert_outcomes(failed=2)
        result.stdout.fnmatch_lines([saved, "*toolpolicy decision*"])
    assert "no A/B item ran" not in result.stdout.str()
    results = _results(report)
    assert sorted(r["variant"] for r in results) == ["current", "policy"]
    assert {r["status"] for r in results} == {"ok"}  # measured; only the file was lost
    lines = (report / "trajectories.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 and all(json.loads(line)["turns"] for line in lines)


READ_ONLY_REPORT = """
import errno, os
import pytest_toolpolicy.decide.report_files as report_files

def read_only(path, write):
    raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))

report_files.write_atomic = read_only
"""


def test_a_report_that_cannot_be_written_still_prints_its_table(evals: pytest.Pytester) -> None:
    evals.makeconftest(READ_ONLY_REPORT)
    report = evals.path / "report"
    result = evals.runpytest_subprocess(
        "--toolpolicy=current", f"--toolpolicy-report={report}", *ONE
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["*toolpolicy decision*", "current *", f"*could not write the report to {report}: *"
         "Read-only file system*"]
    )  # fmt: skip
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    assert len(list((report / "items").glob("*.json"))) == 1  # the item itself was saved


# -- 4. what cannot be encoded as is --------------------------------------------------------


def test_lone_surrogates_and_deep_nesting_reach_the_report(evals: pytest.Pytester) -> None:
    """A scripted model whose replies hold a lone surrogate and arguments nested 500 deep."""
    deep: object = "x"
    for _ in range(500):
        deep = {"a": deep}
    replies = [
        {"tool": "read_file", "args": {"path": deep}},
        {"tool": "submit", "args": {"message": "done \ud800 for now"}},
    ]
    script = evals.path / "replies.jsonl"
    script.write_text("".join(json.dumps(json.dumps(r)) + "\n" for r in replies))
    report = evals.path / "report"
    result = evals.runpytest_subprocess(
        "--toolpolicy=current", f"--toolpolicy-model=scripted:{script}",
        f"--toolpolicy-report={report}", *ONE,
    )  # fmt: skip
    result.assert_outcomes(passed=1)
    (row,) = _results(report)
    assert (row["variant"], row["status"]) == ("current", "ok")
    (line,) = (report / "trajectories.jsonl").read_text(encoding="utf-8").splitlines()
    trajectory = json.loads(line)
    assert trajectory["outcome"]["detail"]["reason"] == "done \\ud800 for now"
    # A reply nested past what any parser here reads is a format error the model is told
    # of (the run goes on), and its text is kept whole in the record.
    first = trajectory["turns"][0]
    assert first["request"] is None and "nested deeper than 64 levels" in first["noop"]
    assert first["completion"]["text"].count('{"a": ') == 500


# -- 5. a session that measured nothing -----------------------------------------------------

ALL_FAIL = """
import pytest_toolpolicy.run.item as item

def broken(spec, harness, directory):
    raise RuntimeError("workspace exploded \\ud800 here")

item._run_item = broken
"""


@pytest.mark.slow  # an A/B session in which every item fails: ~9 s
def test_a_session_where_nothing_was_measured_still_writes_its_report(
    evals: pytest.Pytester,
) -> None:
    evals.makeconftest(ALL_FAIL)
    report = evals.path / "report"
    result = evals.runpytest_subprocess(
        "--toolpolicy=ab", "--toolpolicy-gate", f"--toolpolicy-report={report}", *ONE
    )
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "*toolpolicy decision*",
            "no decision: no item was measured",
            "not measured: 2 of 2 items",
            "item * status * error",
            "*-current * error * harness fault: RuntimeError: workspace exploded \\ud800 here",
            "*-policy * error * harness fault: RuntimeError: workspace exploded*",
            "*toolpolicy gate: FAILED — no item was measured*",
        ]
    )
    for name in ("decision.md", "decision.csv", "decision.html", "trajectories.jsonl"):
        assert (report / name).exists(), name
    results = _results(report)
    assert [r["status"] for r in results] == ["error", "error"]
    assert "workspace exploded \\ud800" in results[0]["error"]
    assert "KeyError" not in result.stdout.str() + result.stderr.str()


# -- 6. bad input before anything runs ------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--toolpolicy-model=gpt-4o"], "*--toolpolicy-model gpt-4o: *did you mean openai:gpt-4o?*"),
        (["--toolpolicy-model=scripted:{tmp}/none.jsonl"],
         "*--toolpolicy-model scripted:{tmp}/none.jsonl: *{tmp}/none.jsonl*"),
        (["--toolpolicy-model=sim:{tmp}/none.toml"], "*--toolpolicy-model sim:{tmp}/none.toml: *"),
        (["--toolpolicy-limits=read_mb=0"], "*--toolpolicy-limits: limit read_mb must be a posit*"),
        (["--toolpolicy-limits=fast"], "*--toolpolicy-limits: unknown limit 'fast'*"),
        (["--toolpolicy-max-turns=-2"], "*--toolpolicy-max-turns must be a positive integer*"),
    ],
)  # fmt: skip
def test_bad_input_is_one_usage_error(
    evals: pytest.Pytester, args: list[str], message: str
) -> None:
    report = evals.path / "report"
    tmp = str(evals.path)
    argv = [a.format(tmp=tmp) for a in args]
    result = evals.runpytest("--toolpolicy=ab", f"--toolpolicy-report={report}", *ONE, *argv)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message.format(tmp=tmp)])
    assert not report.exists()  # refused before anything was created


def test_limits_are_exported_to_the_session_and_its_workers(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Also with the A/B off: the fixtures' primitives read the same bounds."""
    monkeypatch.delenv("TOOLPOLICY_LIMITS", raising=False)
    pytester.makepyfile(
        """
        import os
        from pytest_toolpolicy import limits

        def test_sees_them():
            assert limits.current().search_s == 7
            assert "search_s=7" in os.environ["TOOLPOLICY_LIMITS"]
        """
    )
    on_worker = pytester.runpytest_subprocess("--toolpolicy-limits=search_s=7", "-n", "1")
    on_worker.assert_outcomes(passed=1)
    assert pytester.runpytest_subprocess().ret == pytest.ExitCode.TESTS_FAILED  # not given
    pytester.makeini("[pytest]\ntoolpolicy_limits = search_s=7\n")
    pytester.runpytest().assert_outcomes(passed=1)
    assert "TOOLPOLICY_LIMITS" not in os.environ  # an in-process run puts it back


# -- 7. one lock per item -------------------------------------------------------------------


def test_two_ablation_variants_get_distinct_locks(tmp_path: Path) -> None:
    specs = [ItemSpec("bundled__x-1", "policy", g) for g in ("trigger.lint", "trigger.test")]
    specs += [ItemSpec("bundled__x-1", "policy"), ItemSpec("bundled__x-1", "current")]
    locks = {lock_path(tmp_path / safe_name(s.id)) for s in specs}
    assert len(locks) == len(specs)
    assert all(lock.parent == tmp_path and lock.name.endswith(".lock") for lock in locks)
    assert tmp_path / "bundled__x-1-policy-no_trigger.lint.lock" in locks


# -- 8. activation --------------------------------------------------------------------------


def test_tool_policy_alone_leaves_an_unrelated_project_alone(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOL_POLICY", "policy")
    pytester.makepyfile(test_plain="def test_plain():\n    assert 1 + 1 == 2\n")
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=1)
    summary = [line for line in result.outlines if not line.startswith("plugins:")]
    assert "toolpolicy" not in "\n".join(summary).lower()
    assert not (pytester.path / "reports").exists()


@pytest.mark.parametrize(("flag", "arms"), [("policy", {"policy"}), ("", {"current", "policy"})])
def test_a_bare_option_takes_the_arm_from_the_flag(
    evals: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, flag: str, arms: set[str]
) -> None:
    monkeypatch.setenv("TOOL_POLICY", flag)
    result = evals.runpytest("--collect-only", "-q", *ONE, "--toolpolicy")
    ids = [line for line in result.outlines if "::test_instance[" in line]
    assert {i.rsplit("-", 1)[1].rstrip("]") for i in ids} == arms


# -- 9. a harness fault inside a tool -------------------------------------------------------

FAULTY_TOOL = """
import pytest_toolpolicy.primitives.toolbox as toolbox

def broken(*args, **kwargs):
    raise RuntimeError("index corrupted \\ud800")

toolbox.read_entity = broken
"""


def test_a_harness_fault_in_a_tool_fails_that_item_and_the_others_pass(
    evals: pytest.Pytester,
) -> None:
    """Only the policy arm reads entities (the baseline reads files): its item fails as a
    harness fault, with reason and traceback in its row, and the baseline's item passes."""
    evals.makeconftest(FAULTY_TOOL)
    report = evals.path / "report"
    result = evals.runpytest_subprocess(
        "--toolpolicy=ab", f"--toolpolicy-report={report}", "-rf", *ONE
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*harness fault in *-policy: HarnessFault: *index corrupted*"])
    results = {r["variant"]: r for r in _results(report)}
    assert results["current"]["status"] == "ok"
    assert results["policy"]["status"] == "error"
    assert results["policy"]["error"].startswith("harness fault: HarnessFault: ")
    assert "read_entity" in results["policy"]["traceback"]
