from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_toolpolicy.cli import main
from pytest_toolpolicy.primitives import Workspace

from ..bench.gitmirrors import BASE, diff, make_bundled


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
