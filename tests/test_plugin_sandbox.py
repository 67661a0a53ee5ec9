"""Fail closed, end to end as a user runs it: without bubblewrap a session of a real model or an
external agent is refused at configure, saying why and how to install it; one that opted in to
the degraded mode by name runs, and its table's header says the runs saw the host; ``sim``
keeps running degraded with its note; an external agent is never shown a home directory.

"Without bubblewrap" is ``TOOLPOLICY_BWRAP`` pointing at nothing. Runs that stop at configure
run in process; those that write a report, in a subprocess (tests/test_plugin_safety.py says
why)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.models.stub_server import Reply, StubServer, chat_body, loopback_only

TEST_AB = Path(__file__).parents[1] / "evals" / "test_ab.py"
MISSING = "/nonexistent/bwrap"
ONE = ["--toolpolicy=policy", "--toolpolicy-sample=1", "--toolpolicy-seed=3",
       "--toolpolicy-max-turns=3", "--toolpolicy-no-view", "-p", "no:randomly"]  # fmt: skip
STOP = json.dumps({"tool": "stop", "args": {"reason": "done"}})


@pytest.fixture
def evals(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    loopback_only(monkeypatch)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    monkeypatch.setenv("TOOLPOLICY_BWRAP", MISSING)
    monkeypatch.delenv("TOOLPOLICY_SANDBOX", raising=False)
    pytester.makepyfile(test_ab=TEST_AB.read_text(encoding="utf-8"))
    return pytester


def test_a_real_model_without_bubblewrap_is_refused_before_anything_runs(
    evals: pytest.Pytester,
) -> None:
    report = evals.path / "report"
    result = evals.runpytest(
        *ONE, "--toolpolicy-model=openai:stub-model", f"--toolpolicy-report={report}"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*sandbox: a real model (openai:stub-model) runs only in bubblewrap's sandbox, and"
            f" bubblewrap is not installed (bwrap not found at {MISSING}): install it: apt-get"
            " install bubblewrap (or `make sandbox`*; or, to run anyway with this host's files"
            " and network in view of every run, opt in with TOOLPOLICY_SANDBOX=degraded*"
        ]
    )
    assert not report.exists()


@pytest.mark.parametrize("opt_in", [(), ("--toolpolicy-sandbox=degraded",)])
def test_an_external_agent_without_bubblewrap_is_refused_even_when_degraded_is_asked(
    evals: pytest.Pytester, opt_in: tuple[str, ...]
) -> None:
    script = evals.path / "replies.jsonl"
    script.write_text(json.dumps({"text": STOP}) + "\n")
    result = evals.runpytest(
        *ONE, f"--toolpolicy-model=scripted:{script}", "--toolpolicy-current=cmd:true", *opt_in
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    why = "never degraded (--toolpolicy-sandbox=degraded)" if opt_in else "apt-get install"
    result.stderr.fnmatch_lines(
        [f"*an external agent (--toolpolicy-current cmd:true) runs only in bubblewrap's*{why}*"]
    )


def test_an_external_agent_is_never_shown_a_home_directory(
    evals: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(evals.path))  # the session starts in the user's home
    result = evals.runpytest(*ONE, "--toolpolicy-current=cmd:true")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            f"*--toolpolicy-current cmd:true: this session started in {evals.path}, a home"
            " directory, which holds its user's credentials*start the session in your project's"
            " directory*"
        ]
    )


def test_a_real_model_runs_degraded_when_asked_by_name_and_the_header_says_so(
    evals: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLPOLICY_SANDBOX", "degraded")
    report = evals.path / "report"
    with StubServer(Reply(body=chat_body(f"[{STOP}]"))) as stub:
        result = evals.runpytest_subprocess(
            *ONE, "--toolpolicy-model=openai:stub-model", f"--toolpolicy-base-url={stub.url}",
            f"--toolpolicy-report={report}",
        )  # fmt: skip
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "sandbox: DEGRADED \u2014 runs saw the host's files and network"
            " (TOOLPOLICY_SANDBOX=degraded)"
        ]
    )
    rows = pq.read_table(report / "results.parquet").to_pylist()
    assert [row["sandbox"] for row in rows] == ["degraded"]


def test_sim_without_bubblewrap_still_runs_degraded_with_its_note(evals: pytest.Pytester) -> None:
    result = evals.runpytest_subprocess(*ONE, f"--toolpolicy-report={evals.path / 'report'}")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["sandbox: DEGRADED (no bubblewrap): tests and commands ran unconfined"]
    )
    assert "host's files and network" not in result.stdout.str()
