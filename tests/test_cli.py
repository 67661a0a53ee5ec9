import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_toolpolicy import limits
from pytest_toolpolicy.cli import main, positive_int, positive_number
from pytest_toolpolicy.primitives.envelope import HarnessFault

from .malformed import one_line, write_malformed


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


def test_console_script_is_installed():
    exe = Path(sys.executable).parent / "toolpolicy"
    proc = subprocess.run([str(exe), "--help"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0 and "primitive" in proc.stdout


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["complete", "--model", "sim", "--max-tokens", "-5", "hi"],
            "--max-tokens: must be a positive integer, got -5",
        ),
        (
            ["complete", "--model", "sim", "--max-tokens", "1.5", "hi"],
            "--max-tokens: must be a positive integer, got 1.5",
        ),
        (
            ["validate", "--dataset", "bundled", "--jobs", "0"],
            "--jobs: must be a positive integer, got 0",
        ),
        (
            ["validate", "--dataset", "bundled", "--timeout", "inf"],
            "--timeout: must be a positive number, got inf",
        ),
        (
            ["validate", "--dataset", "bundled", "--timeout", "soon"],
            "--timeout: must be a positive number, got soon",
        ),
        (
            ["validate", "--dataset", "bundled", "--limits", "read_mb=-1"],
            "--limits: limit read_mb must be a positive number, got '-1'",
        ),
        (
            ["run", "--instance", "x", "--arm", "policy", "--model", "sim", "--limits", "nope=1"],
            "--limits: unknown limit 'nope=1'",
        ),
    ],
)
def test_bad_numbers_and_limits_are_argparse_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    assert f"error: argument {message}" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--timeout", "-1"], "--timeout must be a positive number of seconds, got '-1'"),
        (["--timeout=0"], "--timeout must be a positive number of seconds, got '0'"),
        (["--timeout", "nan"], "--timeout must be a positive number of seconds, got 'nan'"),
        (["--retries", "-1"], "--retries must be a whole number ≥ 0, got '-1'"),
        (["--structured", "yaml"], "--structured must be one of off, json, got 'yaml'"),
        (["--max-output", "current=x"], "--max-output current must be a whole number"),
    ],
)
def test_model_options_are_the_sessions_and_say_what_is_wrong(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``run`` and ``complete`` read their model options with the pytest session's parsers."""
    for command in (["complete", "--model", "sim", *argv, "hi"],
                    ["run", "--instance", "x", "--arm", "policy", "--model", "sim", *argv]):  # fmt: skip
        assert main(command) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"toolpolicy: {message}") and "--toolpolicy-" not in err


def test_good_numbers_parse() -> None:
    assert (positive_int("3"), positive_number("0.5"), positive_number("2")) == (3, 0.5, 2.0)


def test_limits_are_exported_over_the_environments_before_anything_runs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(limits.ENV, "read_mb=8")
    # The dataset is unusable (exit 2), so nothing but the export happened.
    assert main(["validate", "--dataset", "nowhere.txt", "--limits", "search_s=5"]) == 2
    exported = limits.parse_limits(os.environ[limits.ENV])
    assert (exported.read_mb, exported.search_s, exported.workspace_mb) == (8, 5, 512)
    monkeypatch.setenv(limits.ENV, "read_mb=oops")
    with pytest.raises(SystemExit):
        main(["primitive", "--workspace", ".", '{"tool": "x"}'])
    assert f"error: environment variable {limits.ENV}: limit read_mb" in capsys.readouterr().err


def fault(*args: object, **kwargs: object) -> None:
    raise HarnessFault("index build failed:\n  sqlite disk I/O error")


def test_a_harness_fault_is_one_line_and_exit_three(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import pytest_toolpolicy.policy.step as step_module
    from pytest_toolpolicy.primitives import Toolbox

    expected = "toolpolicy: harness fault: index build failed: sqlite disk I/O error\n"
    monkeypatch.setattr(Toolbox, "call", fault)
    assert main(["primitive", "--workspace", str(repo), '{"tool": "read_entity"}']) == 3
    assert capsys.readouterr().err == expected
    monkeypatch.setattr(step_module, "step", fault)
    ledger = tmp_path / "ledger.json"
    reply = '{"tool": "read_entity", "args": {"selector": "shop"}}'
    assert main(["call", "--workspace", str(repo), "--ledger", str(ledger), reply]) == 3
    assert capsys.readouterr().err == expected
    assert not ledger.exists()


def test_other_exceptions_still_raise(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_toolpolicy.primitives import Toolbox

    def bug(*args: object) -> None:
        raise KeyError("a bug")

    monkeypatch.setattr(Toolbox, "call", bug)
    with pytest.raises(KeyError):
        main(["primitive", "--workspace", str(repo), '{"tool": "read_entity"}'])


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


SAMPLE = Path(__file__).parent / "data" / "swebench" / "verified_full_sample.jsonl"
BUNDLED = Path(__file__).parents[1] / "pytest_toolpolicy" / "bench" / "bundled" / "instances"


@pytest.fixture
def malformed_dataset(tmp_path: Path) -> tuple[Path, str]:
    """SWE-bench rows: two good, psf__requests-1142 with a FAIL_TO_PASS of the wrong type on
    line 2, a torn last line. The torn line's number."""
    flask, requests, other = (json.loads(line) for line in SAMPLE.read_text().splitlines())
    data = tmp_path / "rows.jsonl"
    return data, write_malformed(data, [flask, other], {**requests, "FAIL_TO_PASS": 5})


def test_validate_skips_malformed_records_and_says_so_once(
    malformed_dataset: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, _ = malformed_dataset
    mirrors = tmp_path / "mirrors"
    mirrors.mkdir()  # none: each good instance is validated, as an infra error, at once
    ids = ["pallets__flask-5014", "psf__requests-1142", "psf__requests-2317"]
    argv = ["validate", "--dataset", str(data), "--repos", str(mirrors), "--ids", *ids]
    assert main([*argv, "--record", str(tmp_path / "validated.jsonl")]) == 1
    captured = capsys.readouterr()
    assert one_line(captured.err) == (
        f"toolpolicy validate: {data}:2: instance psf__requests-1142: field FAIL_TO_PASS:"
        " not a list of test ids (5) (1 malformed record skipped)"
    )
    assert "2 instances, 2 failed, 1 failed to load" in captured.out  # the good two were used
    for good in ("pallets__flask-5014", "psf__requests-2317"):
        assert re.search(rf"^\[\d/2\] {good} \d+s infra_error: workspace$", captured.out, re.M)


def test_validate_records_past_a_torn_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    record = tmp_path / "rows.jsonl"
    record.write_text('{"instance_id": "x", "ok": tr')  # a run killed mid-row
    mirrors = tmp_path / "mirrors"
    mirrors.mkdir()
    argv = ["validate", "--dataset", str(SAMPLE), "--repos", str(mirrors), "--record", str(record)]
    assert main([*argv, "--ids", "pallets__flask-5014"]) == 1  # no mirror: an infra error
    assert one_line(capsys.readouterr().err) == (
        f"toolpolicy validate: {record}:1: cut short; the rows are recorded from the next line on"
    )
    row = json.loads(record.read_text().splitlines()[1])  # the new row, whole, on line 2
    assert row["instance_id"] == "pallets__flask-5014" and row["category"] == "infra_error"


@pytest.mark.parametrize("command", ["validate", "run"])
def test_a_torn_json_dataset_is_one_line_and_exit_two(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    data = tmp_path / "rows.json"
    data.write_text("[" + SAMPLE.read_text().splitlines()[0] + ",\n" + '{"instance_id": "psf_')
    argv = ["--dataset", str(data)]
    argv += ["--instance", "psf__requests-1142", "--arm", "policy", "--model", "sim"] * (
        command == "run"
    )
    assert main([command, *argv]) == 2
    assert one_line(capsys.readouterr().err).startswith(
        f"toolpolicy {command}: {data}:2: not JSON: Unterminated string starting at (column 17)"
    )


def test_run_refuses_the_malformed_record_it_was_asked_for(
    malformed_dataset: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    data, _ = malformed_dataset
    argv = ["run", "--dataset", str(data), "--arm", "policy", "--model", "sim"]
    assert main([*argv, "--instance", "psf__requests-1142"]) == 2
    assert one_line(capsys.readouterr().err) == (
        f"toolpolicy run: {data}:2: instance psf__requests-1142: field FAIL_TO_PASS:"
        " not a list of test ids (5)"
    )


def test_run_goes_on_past_another_instances_torn_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copytree(BUNDLED.parent, tmp_path / "bundled")  # the instances and their repos
    bundled = tmp_path / "bundled" / "instances"
    spec = bundled / "bundled__memstore-2" / "instance.json"
    spec.write_text(spec.read_text()[:80])
    out = tmp_path / "traj.jsonl"
    replies = tmp_path / "replies.jsonl"
    replies.write_text(json.dumps(json.dumps({"tool": "stop", "args": {"reason": "no"}})) + "\n")
    argv = ["run", "--dataset", f"bundled:{bundled}", "--instance", "bundled__memstore-1"]
    argv += ["--arm", "policy", "--model", f"scripted:{replies}", "--out", str(out)]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "instance: bundled__memstore-1  arm: policy" in captured.out
    assert captured.err == ""  # a record it was not asked for: nothing to say of it
    argv[4] = "bundled__memstore-2"
    assert main(argv) == 2
    assert one_line(capsys.readouterr().err).startswith(
        f"toolpolicy run: bundled:{bundled}: instance bundled__memstore-2: field instance.json:"
        f" unreadable JSON in {spec}: "
    )


def test_run_with_a_real_model_fails_closed_without_a_sandbox(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No bubblewrap: a real model's run is refused before anything starts, saying how to
    install it or opt in; with the opt-in (or with sim) it runs."""
    monkeypatch.setenv("TOOLPOLICY_BWRAP", "/nonexistent/bwrap")
    argv = ["run", "--instance", "bundled__memstore-1", "--arm", "policy"]
    assert main([*argv, "--model", "openai:gpt-test", "--base-url", "http://127.0.0.1:9/v1"]) == 2
    err = one_line(capsys.readouterr().err)
    assert "a real model (openai:gpt-test) runs only in bubblewrap's sandbox" in err
    assert "apt-get install bubblewrap" in err and "TOOLPOLICY_SANDBOX=degraded" in err
