"""The A/B session end to end through ``pytester``, as a user runs it.

The runs use ``sim`` (the fault-injecting simulator) on a small seeded sample of the bundled
benchmark, so they exercise the real harness: workspaces, sandboxed tests, grading, reruns.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from pytest_toolpolicy.decide.table import decision_table
from pytest_toolpolicy.run.rebuild import results_from_trajectories

from .once import made_once

TEST_AB = Path(__file__).parents[1] / "evals" / "test_ab.py"
SAMPLE = ["--toolpolicy-sample=2", "--toolpolicy-seed=3", "-p", "no:randomly"]
# For tests of what happens to an item, not of resolving: a run that ends unresolved within
# three turns is measured without counterfactual reruns.
SHORT = "--toolpolicy-max-turns=3"
# Operational counts that depend on which worker reached a state first; not measures.
VOLATILE = ("cf_tool_executions",)


@pytest.fixture
def evals(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(test_ab=TEST_AB.read_text(encoding="utf-8"))
    return pytester


def _table(report: Path) -> pd.DataFrame:
    table = pd.read_csv(report / "decision.csv", index_col=0)
    return table.drop(columns=[c for c in table.columns if c in VOLATILE])


def test_help_lists_the_option_group(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(["*tool-calling policy A/B*", "*--toolpolicy=[[]MODE[]]*"])
    for name in ("model", "dataset", "repos", "sample", "seed", "ablate", "cache", "report"):
        result.stdout.fnmatch_lines([f"*--toolpolicy-{name}*"])
    for name in ("gate", "max-turns", "resume", "limits"):
        result.stdout.fnmatch_lines([f"*--toolpolicy-{name}*"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--toolpolicy=bogus"], "*--toolpolicy must be one of current, policy, ab*"),
        (["--toolpolicy=ab", "--toolpolicy-sample=0"], "*--toolpolicy-sample must be a positive*"),
        (["--toolpolicy=ab", "--toolpolicy-seed=x"], "*--toolpolicy-seed must be an integer*"),
        (["--toolpolicy=ab", "--toolpolicy-ablate=nope"], "*unknown gate nope*"),
        (["--toolpolicy=policy", "--toolpolicy-gate"], "*--toolpolicy-gate decides*"),
        (["--toolpolicy=ab", "--toolpolicy-cache=maybe"], "*--toolpolicy-cache must be*"),
        (["--toolpolicy=ab", "--toolpolicy-dataset=/no/such.jsonl"], "*--toolpolicy-dataset*"),
    ],
)
def test_bad_values_are_usage_errors(evals: pytest.Pytester, args: list[str], message: str) -> None:
    result = evals.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_off_by_default_the_item_is_skipped_with_the_reason(evals: pytest.Pytester) -> None:
    result = evals.runpytest("-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*the A/B is off: run with --toolpolicy=ab|policy|current*"])


def test_tool_policy_variable_alone_leaves_the_ab_off(
    evals: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOL_POLICY", "current")
    result = evals.runpytest("-rs", *SAMPLE)
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*the A/B is off*"])


def test_a_bare_option_runs_the_arm_the_variable_names(
    evals: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOL_POLICY", "current")
    result = evals.runpytest("--collect-only", "-q", *SAMPLE, "--toolpolicy")
    ids = [line for line in result.outlines if "::test_instance[" in line]
    assert len(ids) == 2 and all(i.endswith("-current]") for i in ids)


def test_ini_keys_set_the_defaults(evals: pytest.Pytester) -> None:
    evals.makeini("[pytest]\ntoolpolicy = policy\ntoolpolicy_sample = 2\ntoolpolicy_seed = 3\n")
    result = evals.runpytest("--collect-only", "-q", "-p", "no:randomly")
    ids = [line for line in result.outlines if "::test_instance[" in line]
    assert len(ids) == 2 and all(i.endswith("-policy]") for i in ids)


def test_ablating_a_gate_the_candidate_lacks_runs_nothing(evals: pytest.Pytester) -> None:
    result = evals.runpytest("--collect-only", "-q", "--toolpolicy=ab", *SAMPLE,
                             "--toolpolicy-ablate=retrieve.embed,trigger.lint")  # fmt: skip
    ids = [line for line in result.outlines if "::test_instance[" in line]
    assert len(ids) == 6
    assert not [i for i in ids if "retrieve.embed" in i]


def test_item_ids(evals: pytest.Pytester) -> None:
    result = evals.runpytest(
        "--collect-only", "-q", "--toolpolicy=ab", "--toolpolicy-ablate=trigger.test", *SAMPLE
    )
    ids = [line for line in result.outlines if "::test_instance[" in line]
    assert len(ids) == 6
    instances = sorted({i.split("[")[1].rsplit("-current]", 1)[0] for i in ids if "-current]" in i})
    assert len(instances) == 2
    for instance in instances:
        for variant in ("current", "policy", "policy-no:trigger.test"):
            assert f"test_ab.py::test_instance[{instance}-{variant}]" in ids


def _serial(tmp_path_factory: pytest.TempPathFactory, sample: int) -> Path:
    """One uninterrupted serial A/B of ``sample`` instances (with one ablated gate), run once
    per test run (not once per xdist worker) and shared by the comparisons."""

    def run(root: Path) -> None:
        (root / "test_ab.py").write_text(TEST_AB.read_text(encoding="utf-8"), encoding="utf-8")
        report = root / "report"
        _run(
            root,
            f"--toolpolicy-sample={sample}",
            "--toolpolicy=ab",
            "--toolpolicy-ablate=trigger.test",
            f"--toolpolicy-report={report}",
        )

    return made_once(tmp_path_factory, f"test_plugin_ab-serial_run-{sample}", run) / "report"


@pytest.fixture(scope="session")
def serial_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One instance (bundled__httpkit-3: resolved, so its calls are rerun): ~5 s."""
    return _serial(tmp_path_factory, 1)


@pytest.fixture(scope="session")
def serial_run_2(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two instances, for the slow comparisons of whole sessions: ~30 s."""
    return _serial(tmp_path_factory, 2)


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "pytest", "test_ab.py", "-q", *SAMPLE, *args]
    return subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=900)


def test_serial_run_prints_and_writes_the_decision(serial_run: Path) -> None:
    for name in ("decision.md", "decision.csv", "decision.html", "results.parquet"):
        assert (serial_run / name).stat().st_size > 0
    results = pd.read_parquet(serial_run / "results.parquet")
    assert len(results) == 3 and set(results["status"]) == {"ok"}
    assert set(results["variant"]) == {"current", "policy", "policy-no:trigger.test"}
    assert results["cf_reruns"].sum() > 0  # resolved runs, their calls rerun
    markdown = (serial_run / "decision.md").read_text(encoding="utf-8")
    assert "sim is a fault-injecting simulator, not a language model" in markdown
    assert "FAIL_TO_PASS" in markdown


@pytest.mark.slow  # the whole A/B again, under -n 2: ~35 s
def test_parallel_run_gives_the_same_table(serial_run_2: Path, tmp_path: Path) -> None:
    (tmp_path / "test_ab.py").write_text(TEST_AB.read_text(encoding="utf-8"), encoding="utf-8")
    report = tmp_path / "report"
    done = _run(
        tmp_path,
        "-n",
        "2",
        "--toolpolicy=ab",
        "--toolpolicy-ablate=trigger.test",
        f"--toolpolicy-report={report}",
    )
    assert done.returncode == 0, done.stdout[-3000:]
    assert "toolpolicy decision" in done.stdout
    pd.testing.assert_frame_equal(_table(report), _table(serial_run_2))


def test_measures_recomputed_from_trajectories_equal_the_table(serial_run: Path) -> None:
    recomputed = decision_table(results_from_trajectories(serial_run / "trajectories.jsonl"))
    printed = pd.read_csv(serial_run / "decision.csv", index_col=0)
    for column in ("resolve", "cost", "tokens", "call_precision", "selection_accuracy"):
        assert recomputed[column].astype(float).round(12).tolist() == pytest.approx(
            printed[column].astype(float).round(12).tolist(), nan_ok=True
        ), column
    assert recomputed["verdict"].fillna("").tolist() == printed["verdict"].fillna("").tolist()


@pytest.mark.slow  # a run killed midway, then resumed: ~40 s
def test_a_killed_run_resumes_without_losing_items(serial_run_2: Path, tmp_path: Path) -> None:
    (tmp_path / "test_ab.py").write_text(TEST_AB.read_text(encoding="utf-8"), encoding="utf-8")
    report = tmp_path / "report"
    args = ["--toolpolicy=ab", "--toolpolicy-ablate=trigger.test", f"--toolpolicy-report={report}"]
    argv = [sys.executable, "-m", "pytest", "test_ab.py", "-q", *SAMPLE, *args]
    proc = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.DEVNULL, start_new_session=True)
    items = report / "items"
    deadline = time.monotonic() + 600

    def finished() -> set[str]:  # a write cut short leaves only a hidden temporary file
        return {p.name for p in items.glob("*.json") if not p.name.startswith(".")}

    while time.monotonic() < deadline and len(finished()) < 2:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # as a crash or a CI timeout would
    proc.wait()
    done = finished()
    assert 2 <= len(done) < 6
    assert not (report / "decision.csv").exists()

    resumed = _run(tmp_path, *args, "--toolpolicy-resume", "-rA")
    assert resumed.returncode == 0, resumed.stdout[-3000:]
    assert f"resumed: {len(done)} items" in resumed.stdout
    results = pd.read_parquet(report / "results.parquet")
    assert len(results) == 6
    assert int(results["resumed"].fillna(False).astype(bool).sum()) == len(done)
    assert not list(items.glob(".tmp-*"))  # a partial write of the killed run was swept
    pd.testing.assert_frame_equal(_table(report), _table(serial_run_2))
    lines = (report / "trajectories.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 6 and all(json.loads(line)["turns"] for line in lines)


def _sampled_ids(evals: pytest.Pytester) -> list[str]:
    result = evals.runpytest("--collect-only", "-q", "--toolpolicy=ab", *SAMPLE)
    ids = [
        line.split("[", 1)[1][: -len("-current]")]
        for line in result.outlines
        if "-current]" in line
    ]
    assert len(ids) == 2
    return ids


def _gate(evals: pytest.Pytester, rows: dict[str, list[dict]]) -> pytest.RunResult:
    """Run the gate over finished items written beforehand (resumed, so nothing reruns)."""
    from pytest_toolpolicy.session.store import ItemStore

    from .decide.results_factory import item

    report = evals.path / "report"
    store = ItemStore(report)
    store.clear()
    ids = _sampled_ids(evals)
    for variant, overrides in rows.items():
        for instance_id, fields in zip(ids, overrides, strict=True):
            row = item(instance_id=instance_id, variant=variant, **fields)
            store.save(f"{instance_id}-{variant}", row, None)
    # In a subprocess: pandas' parquet engine registers pyarrow types once per process, which an
    # in-process pytester run (it unloads the modules it imported) would repeat.
    return evals.runpytest_subprocess(
        "--toolpolicy=ab", "--toolpolicy-gate", "--toolpolicy-resume",
        f"--toolpolicy-report={report}", *SAMPLE,
    )  # fmt: skip


def test_gate_passes_a_win_at_exactly_one_and_a_half_times_the_cost(
    evals: pytest.Pytester,
) -> None:
    result = _gate(
        evals,
        {
            "current": [{"resolved": False, "cost_usd": 0.1}, {"resolved": False, "cost_usd": 0.1}],
            "policy": [{"resolved": True, "cost_usd": 0.15}, {"resolved": False, "cost_usd": 0.15}],
        },
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.stdout.fnmatch_lines(["*toolpolicy decision*", "*ADOPT*"])
    assert "toolpolicy gate: FAILED" not in result.stdout.str()


def test_gate_fails_a_tie_and_names_the_criterion(evals: pytest.Pytester) -> None:
    tie = [{"resolved": True}, {"resolved": False}]
    result = _gate(evals, {"current": tie, "policy": tie})
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*toolpolicy gate: FAILED*NOT ADOPTED*resolve*"])


def test_gate_fails_a_precision_drop_of_0_031(evals: pytest.Pytester) -> None:
    current = [{"resolved": False, "calls": 500, "necessary_calls": 500}] * 2
    policy = [
        {"resolved": True, "calls": 500, "necessary_calls": 500},
        {"resolved": False, "calls": 500, "necessary_calls": 469},
    ]
    result = _gate(evals, {"current": current, "policy": policy})
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*toolpolicy gate: FAILED*precision*"])
    assert "failed: resolve" not in result.stdout.str()


def test_the_header_counts_the_instances_measured_and_those_run_and_loaded(
    evals: pytest.Pytester,
) -> None:
    """Not the instances loaded: a -k run of one item measured one instance (of the 2 loaded),
    and an instance whose only item was a harness fault ran but was not measured."""
    first, second = _sampled_ids(evals)
    report = evals.path / "report"
    args = ["--toolpolicy=ab", *SAMPLE, SHORT, f"--toolpolicy-report={report}"]
    one = evals.runpytest_subprocess(*args, "-k", f"{second} and current")
    one.assert_outcomes(passed=1, deselected=3)
    one.stdout.fnmatch_lines(["1 instance (* under-specified) of 2 loaded, seed 3; FAIL_TO_PASS*"])
    header = (report / "decision.md").read_text(encoding="utf-8").splitlines()[2]
    assert header.startswith("1 instance (") and " of 2 loaded, seed 3;" in header

    evals.makeconftest(
        f"""
        import pytest_toolpolicy.run.item as item

        real = item._run_item

        def broken(spec, harness, directory):
            if spec.instance_id == "{first}":
                raise RuntimeError("workspace exploded")
            return real(spec, harness, directory)

        item._run_item = broken
        """
    )
    faulted = evals.runpytest_subprocess(*args, "-k", "current")
    faulted.assert_outcomes(passed=1, failed=1, deselected=2)
    faulted.stdout.fnmatch_lines(["1 instance (* under-specified) measured of 2 run, seed 3; *"])


def test_a_row_whose_patch_leaves_the_repository_is_named_and_the_others_run(
    evals: pytest.Pytester,
) -> None:
    """A test_patch naming an absolute path is a load error naming the instance and the field,
    listed in the header, where it used to fail at grading with git's "outside repository"."""
    from pytest_toolpolicy.bench.load import BUNDLED_DIR

    root = evals.path / "bench"
    shutil.copytree(BUNDLED_DIR.parent / "repos", root / "repos")
    good = root / "instances" / "bundled__httpkit-3"
    shutil.copytree(BUNDLED_DIR / good.name, good)
    bad = root / "instances" / "bundled__httpkit-99"
    shutil.copytree(good, bad)
    row = json.loads((bad / "instance.json").read_text(encoding="utf-8"))
    row["instance_id"] = bad.name
    row["test_patch"] = row["test_patch"].replace(" a/", " a//tmp/").replace(" b/", " b//tmp/")
    (bad / "instance.json").write_text(json.dumps(row), encoding="utf-8")
    report = evals.path / "report"
    result = evals.runpytest_subprocess(
        "--toolpolicy=ab", SHORT, f"--toolpolicy-dataset=bundled:{root / 'instances'}",
        f"--toolpolicy-report={report}", "-k", "current", "-p", "no:randomly",
    )  # fmt: skip
    result.assert_outcomes(passed=1, deselected=1)
    result.stdout.fnmatch_lines(
        [
            "instances that could not be loaded: 1 (not run)",
            "  instance bundled__httpkit-99: field test_patch: line 1 names '/tmp/*', which is"
            " absolute",
        ]
    )


def test_a_harness_fault_fails_its_item_and_the_run_goes_on(evals: pytest.Pytester) -> None:
    evals.makeconftest(
        """
        import pytest_toolpolicy.run.item as item

        real = item._run_item

        def broken(spec, harness, directory):
            if spec.variant == "current":
                raise RuntimeError("workspace exploded")
            return real(spec, harness, directory)

        item._run_item = broken
        """
    )
    report = evals.path / "report"
    result = evals.runpytest_subprocess(
        "--toolpolicy=ab", "--toolpolicy-sample=1", SHORT, f"--toolpolicy-report={report}", "-rf"
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*harness fault in *-current: RuntimeError: workspace exploded*",
            "*toolpolicy decision*",
            "*unmeasured items (harness fault or infra error): 1*",
            "not measured: 1 of 2 items",
            "*-current * error * harness fault: RuntimeError: workspace exploded",
        ]
    )
    results = pd.read_parquet(report / "results.parquet")
    failed = results[results["status"] == "error"]
    assert list(failed["variant"]) == ["current"]
    assert "workspace exploded" in failed["error"].iloc[0]
    assert "RuntimeError: workspace exploded" in failed["traceback"].iloc[0]
    assert list(results.loc[results["status"] == "ok", "variant"]) == ["policy"]  # still there


@pytest.mark.slow  # an A/B session with a broken environment: ~9 s
def test_an_instance_grading_cannot_run_is_skipped_and_left_out_of_both_arms(
    evals: pytest.Pytester,
) -> None:
    """An infra error of grading (here: a test that needs the network) is no verdict on either
    arm: the item is skipped with the reason, the row says why, and its instance is left out of
    every arm's measures instead of counting as unresolved."""
    evals.makeconftest(
        """
        import dataclasses
        import pytest_toolpolicy.run.pipeline as pipeline

        real = pipeline.grade
        calls = []

        def grade(workspace, instance, **kwargs):
            result = real(workspace, instance, **kwargs)
            calls.append(workspace.root.parent.name)
            if calls[0].endswith("-current") and len(calls) == 1:  # its first grading only
                return dataclasses.replace(
                    result, resolved=False, status="infra_error",
                    reason="tests/test_api.py::test_get needs the network",
                )
            return result

        pipeline.grade = grade
        """
    )
    report = evals.path / "report"
    result = evals.runpytest_subprocess(
        "--toolpolicy=ab", "--toolpolicy-sample=1", SHORT, f"--toolpolicy-report={report}", "-rs"
    )
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines(
        [
            "*unmeasured items (harness fault or infra error): 1*",
            "*-current * infra_error * infra error: tests/test_api.py::test_get needs the network",
            "SKIPPED * *-current: infra error: tests/test_api.py::test_get needs the network",
        ]
    )
    results = pd.read_parquet(report / "results.parquet")
    assert list(results.loc[results["status"] == "infra_error", "variant"]) == ["current"]
    assert list(results.loc[results["status"] == "ok", "variant"]) == ["policy"]  # measured, kept
    table = pd.read_csv(report / "decision.csv", index_col=0)
    # Left out of the paired sample; the policy row shows its own item, marked unpaired, and
    # no verdict compares them.
    assert table.loc["current", "n"] == 0 and table.loc["current", "sample"] == "none"
    assert table.loc["policy", "n"] == 1 and table.loc["policy", "sample"] == "own"
    assert table.loc["policy", "verdict"].startswith("no paired verdict: every current item")


@pytest.mark.slow  # every request retried against a dead endpoint: ~16 s
def test_a_dead_endpoint_is_a_model_error_on_each_item(
    evals: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing listens on the port: every item fails with the model error, the table still
    prints, and every item is measured as the endpoint left it: not resolved, and counted."""
    import socket

    with socket.socket() as probe:  # a loopback port that was free a moment ago
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    # The client's default retries still run, without the SDK's exponential backoff between
    # them (0.5 s doubling: ~7.5 s an item); the backoff itself is the SDK's own.
    evals.makeconftest(
        "import openai._base_client as client\n\nclient.INITIAL_RETRY_DELAY = 0.001\n"
    )
    report = evals.path / "report"
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    result = evals.runpytest_subprocess(
        "--toolpolicy=ab",
        "--toolpolicy-sample=1",
        "--toolpolicy-model=openai:gpt-4o-mini",
        f"--toolpolicy-report={report}",
        "-rf",
    )
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        ["*: model error: *", "*endpoint errors (the endpoint, not the arm, ended the run):"
         " current 1, policy 1*"]
    )  # fmt: skip
    assert "sk-test-not-a-key" not in result.stdout.str()


@pytest.mark.slow  # A/B sessions against a stub endpoint: ~8 s
def test_the_endpoint_is_set_by_options(
    evals: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Base URL (here an ini key), key variable, timeout and retries as options, not only
    environment variables: the model error names the endpoint they gave."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    evals.makeini(f"[pytest]\ntoolpolicy_base_url = http://127.0.0.1:{port}/v1\n")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("MY_ENDPOINT_KEY", "sk-test-not-a-key")
    result = evals.runpytest_subprocess(
        "--toolpolicy=policy",
        "--toolpolicy-sample=1",
        "--toolpolicy-model=openai:gpt-4o-mini",
        "--toolpolicy-api-key-env=MY_ENDPOINT_KEY",
        "--toolpolicy-timeout=5",
        "--toolpolicy-retries=0",
        f"--toolpolicy-report={evals.path / 'report'}",
        "-rf",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [f"*model error: openai:gpt-4o-mini at http://127.0.0.1:{port}/v1*"]
    )
    assert "sk-test-not-a-key" not in result.stdout.str()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--toolpolicy-timeout=0"], "--toolpolicy-timeout must be a positive number"),
        (["--toolpolicy-retries=-1"], "--toolpolicy-retries must be a whole number"),
        (["--toolpolicy-prices=/no/such.toml"], "--toolpolicy-prices: no such file"),
    ],
)
def test_bad_endpoint_options_are_usage_errors(
    evals: pytest.Pytester, args: list[str], message: str
) -> None:
    result = evals.runpytest("--toolpolicy=policy", *args)  # refused at configure: in process
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{message}*"])


def test_a_session_whose_items_are_all_deselected_says_where_they_are(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_other="def test_plain():\n    assert 1 + 1 == 2\n")
    result = pytester.runpytest(
        "--toolpolicy=ab", f"--toolpolicy-report={pytester.path / 'r'}", "-k", "test_plain"
    )
    result.assert_outcomes(passed=1, deselected=50)  # the shipped items: 25 instances × 2 arms
    result.stdout.fnmatch_lines(["*toolpolicy: no A/B item ran*toolpolicy::test_instance*"])


@pytest.mark.slow  # two whole A/B sessions. In make test: the cache's own record and replay
# (tests/models/test_cache*.py) and a session replaying a committed recording without a server
# (tests/models/local/test_recorded.py)
def test_record_then_replay_gives_the_same_table(evals: pytest.Pytester) -> None:
    cache = evals.path / "completions.sqlite"
    tables = []
    for mode in ("record", "replay"):
        report = evals.path / f"report-{mode}"
        result = evals.runpytest_subprocess(
            "--toolpolicy=ab", "--toolpolicy-sample=1", "--toolpolicy-seed=3",
            f"--toolpolicy-cache={mode}", f"--toolpolicy-cache-file={cache}",
            f"--toolpolicy-report={report}",
        )  # fmt: skip
        result.assert_outcomes(passed=2)
        tables.append(_table(report))
    pd.testing.assert_frame_equal(tables[0], tables[1])


CANDIDATES = '[candidate.issue-first]\nprompt_order = ["issue", "tools", "state"]\n'


def test_trials_and_candidates_make_items_of_their_own(evals: pytest.Pytester) -> None:
    evals.makefile(".toml", candidates=CANDIDATES)
    result = evals.runpytest(
        "--collect-only", "-q", "--toolpolicy=ab", "--toolpolicy-trials=2",
        "--toolpolicy-candidates=candidates.toml", "--toolpolicy-ablate=trigger.test", *SAMPLE,
    )  # fmt: skip
    ids = [line.split("[", 1)[1] for line in result.outlines if "::test_instance[" in line]
    assert len(ids) == 2 * 2 * 4  # instances x trials x (current, policy, candidate, ablation)
    instance = ids[0].rsplit("-current-t1]", 1)[0]
    assert ids[:8] == [
        f"{instance}-{variant}-t{t}]"
        for t in (1, 2)
        for variant in ("current", "policy", "cand:issue-first", "policy-no:trigger.test")
    ]


def test_a_bad_candidates_file_is_a_usage_error(evals: pytest.Pytester) -> None:
    evals.makefile(".toml", candidates="[candidate.x]\ngates_off = ['nope']\n")
    result = evals.runpytest("--toolpolicy=ab", "--toolpolicy-candidates=candidates.toml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--toolpolicy-candidates *candidates.toml*unknown gate nope*"])


@pytest.mark.slow  # a whole session of 6 items: ~8 s; make test checks ids, measures, seeds
def test_a_run_with_trials_and_a_candidate_reports_both(evals: pytest.Pytester) -> None:
    evals.makefile(".toml", candidates=CANDIDATES)
    report = evals.path / "report"
    result = evals.runpytest_subprocess(
        "--toolpolicy=ab", "--toolpolicy-sample=1", "--toolpolicy-trials=2", SHORT,
        "--toolpolicy-candidates=candidates.toml", f"--toolpolicy-report={report}", "-n", "2",
    )  # fmt: skip
    result.assert_outcomes(passed=6)
    result.stdout.fnmatch_lines(
        [
            "trials: 2 runs of every item (sim: one seed a trial)",
            "arm/variant * pass^k",
            "cand:issue-first *",
            "candidate issue-first: *",
            "  power: *",
            "trials: 2 per instance; pass^k = instances resolved in all 2; spread = sd over*",
        ]
    )
    results = pd.read_parquet(report / "results.parquet")
    assert sorted(results["trial"]) == [1, 1, 1, 2, 2, 2]
    assert results["item"].str.endswith(("-t1", "-t2")).all()
    # A seed a trial: the simulator's two trials of an item are runs of their own.
    lines = (report / "trajectories.jsonl").read_text(encoding="utf-8").splitlines()
    seeds = {(json.loads(t)["meta"]["trial"], json.loads(t)["meta"]["sim_seed"]) for t in lines}
    assert seeds == {(1, 0), (2, 1)}


@pytest.mark.slow  # a session of 12 items over two workers: ~15 s
def test_a_bandit_candidate_tunes_its_tau_across_trials(evals: pytest.Pytester) -> None:
    evals.makefile(".toml", candidates=(
        '[candidate.b]\nbandit = {feature = "lp_mean", taus = [-3.0, -0.5]}\n'))  # fmt: skip
    report = evals.path / "report"
    result = evals.runpytest_subprocess(
        "--toolpolicy=ab", "--toolpolicy-sample=2", "--toolpolicy-trials=2", SHORT,
        "--toolpolicy-logprobs=2", "--toolpolicy-candidates=candidates.toml",
        f"--toolpolicy-report={report}", "-n", "2", "-p", "no:randomly",
    )  # fmt: skip
    result.assert_outcomes(passed=12)
    result.stdout.fnmatch_lines(["candidate b: *", "  bandit (UCB1 on resolved, 4 runs): *"])
    results = pd.read_parquet(report / "results.parquet")
    runs = results[results["variant"] == "cand:b"]
    # every run of the bandit got an arm and a place in the order; the first three tried each
    assert sorted(runs["bandit_seq"]) == [1, 2, 3, 4]
    first = runs.sort_values("bandit_seq")["bandit_arm"].tolist()[:3]
    assert sorted(first) == ["-0.5", "-3", "none"]
    assert (results.loc[results["variant"] != "cand:b", "bandit_arm"] == "").all()
    assert (report / "memo.bandit.sqlite").is_file()
