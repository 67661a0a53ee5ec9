import json

import pytest

from pytest_toolpolicy.cli import main

from ..models.stub_server import Reply, StubServer, loopback_only, ok


@pytest.fixture(autouse=True)
def _loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    loopback_only(monkeypatch)


def test_complete_prints_text_usage_and_cost(tmp_path, capsys):
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."stub-model"]\ninput = 1.0\ncached_input = 0.5\noutput = 2.0\n')
    usage = {
        "prompt_tokens": 1000,
        "completion_tokens": 500,
        "prompt_tokens_details": {"cached_tokens": 400},
    }
    with StubServer(ok("pong", usage)) as stub:
        argv = ["complete", "--model", "openai:stub-model", "--base-url", stub.url]
        assert main([*argv, "--prices", str(prices), "ping"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["text"] == "pong" and record["model"] == "openai:stub-model"
    assert record["usage"]["cached_prompt_tokens"] == 400
    # 600 uncached at $1/M + 400 cached at $0.5/M + 500 out at $2/M
    assert record["cost_usd"] == pytest.approx((600 * 1.0 + 400 * 0.5 + 500 * 2.0) / 1e6)
    assert stub.requests[0].body["messages"] == [{"role": "user", "content": "ping"}]


def test_a_dead_endpoint_is_one_line_and_exit_1(capsys):
    fast = {"retry-after-ms": "10"}
    reply = Reply(500, {"error": {"message": "overloaded"}}, headers=fast)
    with StubServer(reply) as stub:
        code = main(["complete", "--model", "openai:m", "--base-url", stub.url, "hi"])
    err = capsys.readouterr().err
    assert code == 1 and err.startswith("toolpolicy: model_error: openai:m at http://127.0.0.1:")
    assert "server error 500 after 4 retries: overloaded" in err and err.count("\n") == 1


def test_replay_miss_and_bad_spec(tmp_path, capsys):
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."m"]\nlocal = true\n')
    cache = tmp_path / "cache.sqlite"
    with StubServer(ok("recorded")) as stub:
        base = ["complete", "--model", "openai:m", "--base-url", stub.url, "--cache", str(cache)]
        base += ["--prices", str(prices)]
        assert main([*base, "--cache-mode", "record", "hello"]) == 0
        assert len(stub.requests) == 1
        capsys.readouterr()
        assert main([*base, "--cache-mode", "replay", "hello"]) == 0
        assert json.loads(capsys.readouterr().out)["replayed"] is True
        assert len(stub.requests) == 1  # served from the cache, no traffic
        assert main([*base, "--cache-mode", "replay", "something else"]) == 1
        assert "replay miss for item cli turn 0" in capsys.readouterr().err
    assert main(["complete", "--model", "gpt-4o", "hi"]) == 2
    assert "did you mean openai:gpt-4o?" in capsys.readouterr().err
