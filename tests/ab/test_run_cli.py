import json

from pytest_toolpolicy.bench.load import load_instances
from pytest_toolpolicy.cli import main
from pytest_toolpolicy.types import load_trajectories

ID = "bundled__memstore-1"


def script(tmp_path, replies) -> str:
    path = tmp_path / "replies.jsonl"
    path.write_text("".join(json.dumps(json.dumps(r)) + "\n" for r in replies))
    return f"scripted:{path}"


def test_current_arm_applying_the_gold_patch_resolves(tmp_path, capsys):
    patch = load_instances("bundled", ids=[ID]).instances[0].patch
    replies = [
        {"tool": "bash", "args": {"command": f"git apply <<'EOF'\n{patch}EOF"}},
        {"tool": "submit", "args": {"message": "fixed"}},
    ]
    out = tmp_path / "traj.jsonl"
    argv = ["run", "--instance", ID, "--arm", "current", "--model", script(tmp_path, replies)]
    assert main([*argv, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "outcome: {'outcome': 'stop', 'reason': 'fixed'}" in printed
    assert "resolved: true  turns: 2  tokens: 0  cost: $0.000000" in printed
    (traj,) = load_trajectories(out)
    assert traj.arm == "current" and traj.meta["grade"]["status"] == "resolved"
    changed = {line for line in traj.patch.splitlines() if line.startswith("diff --git")}
    assert changed == {line for line in patch.splitlines() if line.startswith("diff --git")}


def test_policy_arm_that_only_reads_is_unresolved(tmp_path, capsys):
    replies = [
        {"tool": "search_symbol", "args": {"query": "MemStore.remember"}},
        {"tool": "stop", "args": {"reason": "nothing to do"}},
    ]
    out = tmp_path / "traj.jsonl"
    argv = ["run", "--instance", ID, "--arm", "policy", "--model", script(tmp_path, replies)]
    assert main([*argv, "--out", str(out)]) == 0
    assert "resolved: false  turns: 2" in capsys.readouterr().out
    (traj,) = load_trajectories(out)
    assert traj.meta["grade"]["status"] == "unresolved" and traj.patch == ""


def test_unknown_instance_and_bad_model_exit_two(capsys):
    assert main(["run", "--instance", "nope", "--arm", "policy", "--model", "sim"]) == 2
    assert "nope" in capsys.readouterr().err
    assert main(["run", "--instance", ID, "--arm", "policy", "--model", "gpt-4o"]) == 2
    assert "did you mean openai:gpt-4o?" in capsys.readouterr().err
