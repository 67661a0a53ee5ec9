import json
import subprocess
import sys
from pathlib import Path

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


def test_console_script_is_installed():
    exe = Path(sys.executable).parent / "toolpolicy"
    proc = subprocess.run([str(exe), "--help"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0 and "primitive" in proc.stdout
