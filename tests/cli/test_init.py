"""``toolpolicy`` itself (``cli/__init__.py``): the console script, the limits checked and
exported before any command runs, a harness fault as one line and exit 3, a bug still a
traceback."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_toolpolicy import limits
from pytest_toolpolicy.cli import main
from pytest_toolpolicy.primitives.envelope import HarnessFault


def test_console_script_is_installed():
    exe = Path(sys.executable).parent / "toolpolicy"
    proc = subprocess.run([str(exe), "--help"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0 and "primitive" in proc.stdout


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
