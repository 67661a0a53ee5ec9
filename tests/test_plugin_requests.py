"""The session's request settings end to end, as a user runs them: options → every request an
arm sends (seen by a loopback stub endpoint) → the table's header; and model errors recorded
by a recording session and replayed as the same errors with the endpoint gone."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tests.models.stub_server import Reply, StubServer, chat_body, loopback_only

TEST_AB = Path(__file__).parents[1] / "evals" / "test_ab.py"
STOP = json.dumps({"tool": "stop", "args": {"reason": "done"}})
SUBMIT = json.dumps({"tool": "submit", "args": {"message": "done"}})


@pytest.fixture
def evals(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    loopback_only(monkeypatch)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    pytester.makepyfile(test_ab=TEST_AB.read_text(encoding="utf-8"))
    return pytester


def test_structured_output_limits_and_seed_reach_every_request_of_each_arm(
    evals: pytest.Pytester,
) -> None:
    # The stub answers each arm's own "done": a policy `stop` is a call the baseline refuses
    # only by format, so both replies parse wherever they land.
    with StubServer(Reply(body=chat_body(f"[{SUBMIT}]"))) as stub:
        result = evals.runpytest_subprocess(
            "--toolpolicy=ab",
            "--toolpolicy-sample=1",
            "--toolpolicy-model=openai:stub-model",
            f"--toolpolicy-base-url={stub.url}",
            "--toolpolicy-structured=json",
            "--toolpolicy-max-output=policy=99,current=777",
            "--toolpolicy-model-seed=5",
            "--toolpolicy-logprobs=2",
            f"--toolpolicy-report={evals.path / 'report'}",
        )
        sent = [r.body for r in stub.requests]
    result.assert_outcomes(passed=2)
    by_limit = {body["max_tokens"]: body for body in sent}
    assert set(by_limit) == {99, 777}  # each arm's own limit, and only those
    for body in sent:
        assert body["seed"] == 5 and body["logprobs"] is True and body["top_logprobs"] == 2
        assert body["response_format"]["type"] == "json_schema"
    policy_schema = by_limit[99]["response_format"]["json_schema"]["schema"]
    current_schema = by_limit[777]["response_format"]["json_schema"]["schema"]
    assert policy_schema["type"] == "object" and "anyOf" in current_schema
    result.stdout.fnmatch_lines(
        [
            "*requests: structured output json*current 777, policy 99 tokens; logprobs top 2;"
            " model seed 5*"
        ]  # fmt: skip
    )


def test_off_by_default_for_a_remote_model(evals: pytest.Pytester) -> None:
    with StubServer(Reply(body=chat_body(STOP))) as stub:
        result = evals.runpytest_subprocess(
            "--toolpolicy=policy",
            "--toolpolicy-sample=1",
            "--toolpolicy-model=openai:stub-model",
            f"--toolpolicy-base-url={stub.url}",
            f"--toolpolicy-report={evals.path / 'report'}",
        )
        sent = [r.body for r in stub.requests]
    result.assert_outcomes(passed=1)
    assert sent and all("response_format" not in b and "seed" not in b for b in sent)
    assert all("logprobs" not in b for b in sent)
    result.stdout.fnmatch_lines(["*requests: structured output off*logprobs off*"])


@pytest.mark.slow  # two whole sessions; error record/replay itself: models/test_cache_errors.py
def test_recorded_model_errors_replay_as_themselves_with_the_endpoint_gone(
    evals: pytest.Pytester,
) -> None:
    cache = evals.path / "completions.sqlite"
    common = [
        "--toolpolicy=ab",
        "--toolpolicy-sample=1",
        "--toolpolicy-model=openai:stub-model",
        f"--toolpolicy-cache-file={cache}",
        "--toolpolicy-retries=0",
    ]
    with StubServer(Reply(status=500, body={"error": {"message": "overloaded"}})) as stub:
        recorded = evals.runpytest_subprocess(
            *common,
            "--toolpolicy-cache=record",
            f"--toolpolicy-base-url={stub.url}",
            f"--toolpolicy-report={evals.path / 'recorded'}",
        )
    recorded.assert_outcomes(failed=2)
    replayed = evals.runpytest_subprocess(
        *common,
        "--toolpolicy-cache=replay",
        "--toolpolicy-base-url=http://127.0.0.1:9/v1",  # nothing listens: only the file answers
        f"--toolpolicy-report={evals.path / 'replayed'}",
    )
    replayed.assert_outcomes(failed=2)
    assert "replay miss" not in replayed.stdout.str()
    before = pd.read_parquet(evals.path / "recorded" / "results.parquet")
    after = pd.read_parquet(evals.path / "replayed" / "results.parquet")
    assert list(after["error"]) == list(before["error"])
    assert all("500" in e or "overloaded" in e for e in after["error"])
    assert after["tokens_unknown"].all() and (after["status"] == "model_error").all()
    # what their answered calls cost (none answered); the failed call's spend is unknown
    assert list(after["cost_usd"]) == list(before["cost_usd"]) == [0.0, 0.0]
