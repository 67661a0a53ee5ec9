from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_toolpolicy.cli import main
from pytest_toolpolicy.primitives import Workspace

from ..bench.gitmirrors import BASE, diff, make_bundled
from ..envs.runner_repo import make_runner_repo
from ..malformed import one_line

SAMPLE = Path(__file__).parents[1] / "data" / "swebench" / "verified_full_sample.jsonl"


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    root = tmp_path / "instances"
    make_bundled(root, "bundled__calc-1")
    make_bundled(root, "bundled__calc-2")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    for rel, text in BASE.items():
        (scratch / rel).parent.mkdir(parents=True, exist_ok=True)
        (scratch / rel).write_text(text)
    Workspace.create(scratch)
    # Applies cleanly but does not fix the bug.
    wrong = diff(scratch, {"calc/ops.py": BASE["calc/ops.py"].replace("a // b", "(a // b) * 1")})
    make_bundled(root, "bundled__calc-3", patch=wrong)
    return root


def test_validate_table_and_exit_code(
    dataset: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (dataset / "bundled__broken-1").mkdir()
    (dataset / "bundled__broken-1/instance.json").write_text("{not json")
    record = tmp_path / "rows.jsonl"
    argv = ["validate", "--dataset", f"bundled:{dataset}", "--jobs", "3", "--record", str(record)]
    code = main(argv)
    out = capsys.readouterr().out
    assert code == 1, out
    progress, _, rest = out.partition("instance ")
    counts = [int(c) for c in re.findall(r"^\[(\d)/3\] \S+ \d+s ", progress, re.M)]
    assert counts == [1, 2, 3] and len(progress.splitlines()) == 3, progress
    assert {line.split()[1]: line.split(" ", 3)[3] for line in progress.splitlines()} == {
        "bundled__calc-1": "ok",
        "bundled__calc-2": "ok",
        "bundled__calc-3": "failed: gold: tests failed",
    }
    table, _, cover = ("instance " + rest).partition("\ncoverage (rows recorded in ")
    lines = table.splitlines()
    assert re.match(r"instance\s+gold\s+empty\s+seconds\s+verdict$", lines[0])
    for n in (1, 2):
        assert re.match(rf"bundled__calc-{n}\s+resolved\s+unresolved\s+[\d.]+\s+ok$", lines[n])
    assert re.match(
        r"bundled__calc-3\s+unresolved\s+unresolved\s+[\d.]+\s+"
        r"FAIL: gold unresolved: tests/test_ops.py::test_div_float failed$",
        lines[3],
    )
    assert lines[4].startswith("load error: instance bundled__broken-1: field instance.json:")
    assert lines[5] == "3 instances, 1 failed, 1 failed to load"
    assert cover.splitlines()[0] == f"{record}):"
    assert cover.splitlines()[3] == (
        "| bundled/calc | 3 | 2 | 67% | 0 | - | 1 | gold: tests failed ×1 |"
    )
    recorded = [json.loads(line) for line in record.read_text().splitlines()]
    assert sorted((r["instance_id"], r["category"]) for r in recorded) == [
        ("bundled__calc-1", "validated"),
        ("bundled__calc-2", "validated"),
        ("bundled__calc-3", "failed"),
    ]


def test_validate_passes_on_good_instances(
    dataset: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_bundled(dataset, "bundled__calc-4", patch="", underspecified=True, FAIL_TO_PASS=[])
    assert main(["validate", "--dataset", f"bundled:{dataset}", "--ids", "bundled__calc-4"]) == 0
    out = capsys.readouterr().out
    lines = out.split("\ncoverage (")[0].splitlines()
    assert re.match(r"\[1/1\] bundled__calc-4 \d+s ok$", lines[0])
    assert re.match(r"bundled__calc-4\s+-\s+p2p ok\s+[\d.]+\s+under-specified \(", lines[2])
    assert lines[-1] == "1 instances, 0 failed, 0 failed to load"
    assert out.splitlines()[-1] == "| bundled/calc | 1 | 1 | 100% | 0 | - | 0 | - |"


def test_unknown_dataset_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--dataset", "nowhere.txt"]) == 2
    assert "unknown dataset source" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("jobs", "timeout", "message"),
    [
        (0, 300.0, "jobs must be a positive integer, got 0"),
        (True, 300.0, "jobs must be a positive integer, got True"),
        (2, -1.0, "timeout must be a positive number of seconds, got -1.0"),
        (2, float("nan"), "timeout must be a positive number of seconds, got nan"),
    ],
)
def test_validate_refuses_bad_jobs_and_timeouts_before_grading(
    jobs: int, timeout: float, message: str
) -> None:
    from pytest_toolpolicy.grading.validate import validate
    from pytest_toolpolicy.primitives.sandbox import Sandbox

    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        validate([], sandbox=Sandbox.from_env(), jobs=jobs, timeout=timeout)


def test_validate_with_limits_runs_under_them(
    dataset: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_toolpolicy import limits

    monkeypatch.setenv(limits.ENV, "")
    argv = ["validate", "--dataset", f"bundled:{dataset}", "--ids", "bundled__calc-1"]
    assert main([*argv, "--limits", "snapshot_s=90,read_mb=2"]) == 0
    assert "\n1 instances, 0 failed, 0 failed to load\n" in capsys.readouterr().out
    assert (limits.current().snapshot_s, limits.current().read_mb) == (90, 2)


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


def test_validate_builds_the_environments_first_and_grading_builds_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real repository's instance: its environment built once, with its lines, before the
    first instance is graded; the builder refuses from then on, and the gold patch resolves."""
    from pytest_toolpolicy.envs import builder, cache, stage

    repo = make_runner_repo(tmp_path / "repo")
    repo.use(monkeypatch, tmp_path / "cache")
    resolve = stage.resolve_environments

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("grading entered the environment builder")

    def then_refuse(*args: Any, **kwargs: Any) -> Any:
        resolved = resolve(*args, **kwargs)
        monkeypatch.setattr(cache, "build_environment", refuse)
        monkeypatch.setattr(builder.Builder, "__init__", refuse)
        return resolved

    monkeypatch.setattr(stage, "resolve_environments", then_refuse)
    record = tmp_path / "rows.jsonl"
    argv = ["validate", "--dataset", str(repo.data), "--repos", str(repo.mirrors)]
    assert main([*argv, "--record", str(record)]) == 0
    lines = capsys.readouterr().out.splitlines()
    what = rf"acme/runner 1\.0 @ {repo.base[:12]} \(1 instance\(s\)\)"
    assert re.fullmatch(rf"\[1/1\] {what} \.\.\.", lines[0]), lines
    assert re.fullmatch(rf"built   {what} [\d.]+s  acme__runner-1\.0-\w{{12}}", lines[1]), lines
    assert re.fullmatch(r"\[1/1\] acme__runner-1 \d+s ok", lines[2]), lines
