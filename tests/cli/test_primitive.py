"""``toolpolicy primitive`` (and ``call`` given the same hostile input): the envelope as JSON,
a failed call still exit 0, unusable input one line and exit 2."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_toolpolicy.cli import main


def run_cli(*args: str) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "pytest_toolpolicy.cli", *args]
    return subprocess.run(argv, capture_output=True, text=True, check=False)


def test_primitive_prints_the_envelope(repo: Path):
    req = json.dumps({"tool": "read_entity", "args": {"selector": "shop.cart.helper"}})
    proc = run_cli("primitive", "--workspace", str(repo), req)
    assert proc.returncode == 0, proc.stderr
    env = json.loads(proc.stdout)
    assert env["ok"] and env["data"]["entity"]["signature"] == "def helper(x):"


def test_failed_call_still_exits_zero(repo: Path, capsys):
    req = json.dumps({"tool": "read_entity", "args": {"selector": "shop.nope"}})
    assert main(["primitive", "--workspace", str(repo), req]) == 0
    assert json.loads(capsys.readouterr().out)["error"] == "unknown selector shop.nope"
    assert main(["primitive", "--workspace", str(repo), '{"tool": "bash"}']) == 0
    assert json.loads(capsys.readouterr().out)["error"] == "unknown tool: bash"


def test_unusable_input_exits_two_with_one_line(repo: Path, tmp_path: Path, capsys):
    cases = [
        ([str(repo), "{not json"], "toolpolicy: request is not valid JSON"),
        ([str(repo), '["tool"]'], "toolpolicy: request must be a JSON object"),
        ([str(tmp_path / "missing"), '{"tool": "x"}'], "toolpolicy: workspace directory not found"),
    ]
    for (workspace, request), message in cases:
        assert main(["primitive", "--workspace", workspace, request]) == 2
        err = capsys.readouterr().err
        assert err.startswith(message) and err.count("\n") == 1


def test_a_lone_surrogate_in_a_request_is_bad_input_and_everything_still_prints(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    request = '{"tool": "search_symbol", "args": {"query": "Cart\\ud800"}}'
    assert main(["primitive", "--workspace", str(repo), request]) == 0
    envelope = json.loads(capsys.readouterr().out)
    assert envelope == {
        "ok": False,
        "error": "invalid arg: query (not valid text: a lone surrogate)",
        "data": None,
    }
    ledger = tmp_path / "ledger.json"
    reply = '{"tool": "search_symbol", "args": {"query": "Cart\\udc80"}}'
    assert main(["call", "--workspace", str(repo), "--ledger", str(ledger), reply]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["rejected"] and "lone surrogate" in printed["reason"]
    saved = ledger.read_bytes().decode("utf-8")  # strict: the ledger is valid UTF-8
    assert json.loads(saved)["entries"][0]["kind"] == "rejected"


def test_deep_requests_and_a_ledger_without_a_directory_are_usage_errors(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    assert main(["primitive", "--workspace", str(repo), deep]) == 2
    assert capsys.readouterr().err == "toolpolicy: request is nested too deep to read\n"
    ledger = tmp_path / "no" / "ledger.json"
    assert main(["call", "--workspace", str(repo), "--ledger", str(ledger), "{}"]) == 2
    assert f"no directory {ledger.parent}" in capsys.readouterr().err
