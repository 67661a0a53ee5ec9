import json
import os

import pytest

from pytest_toolpolicy import limits
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


def run_argv(tmp_path, replies) -> list[str]:
    return ["run", "--instance", ID, "--arm", "policy", "--model", script(tmp_path, replies)]


STOP = {"tool": "stop", "args": {"reason": "nothing to do"}}


def test_out_makes_only_its_last_directory(tmp_path, capsys):
    out = tmp_path / "runs" / "traj.jsonl"
    assert main([*run_argv(tmp_path, [STOP]), "--out", str(out)]) == 0
    assert len(load_trajectories(out)) == 1
    assert main([*run_argv(tmp_path, [STOP]), "--out", str(out)]) == 0
    assert len(load_trajectories(out)) == 1  # replaced, not appended to
    assert [p.name for p in out.parent.iterdir()] == ["traj.jsonl"]  # no temporary left
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask  # not the temporary file's 0600


@pytest.mark.parametrize(
    ("out", "message"),
    [
        (
            "a/b/traj.jsonl",
            "directory {tmp}/a does not exist (only the last directory of --out, b,",
        ),
        ("file/traj.jsonl", "{tmp}/file exists and is not a directory"),
        ("file/x/traj.jsonl", "{tmp}/file exists and is not a directory"),
        ("dir", "{tmp}/dir is a directory; --out names the trajectory file"),
    ],
)
def test_a_bad_out_is_refused_before_anything_runs(tmp_path, capsys, out, message):
    (tmp_path / "file").write_text("")
    (tmp_path / "dir").mkdir()
    before = sorted(tmp_path.rglob("*"))
    # The model spec would fail too, later: --out is refused first, by argparse.
    argv = ["run", "--instance", ID, "--arm", "policy", "--model", "scripted:/nowhere.jsonl"]
    with pytest.raises(SystemExit) as exited:
        main([*argv, "--out", str(tmp_path / out)])
    assert exited.value.code == 2
    assert f"argument --out: {message.format(tmp=tmp_path)}" in capsys.readouterr().err
    assert sorted(tmp_path.rglob("*")) == before


def test_a_trajectory_with_lone_surrogates_is_written_and_reads_back(tmp_path, capsys):
    replies = [
        {"tool": "search_symbol", "args": {"query": "Mem\ud800Store"}},
        {"tool": "stop", "args": {"reason": "done \udc80"}},
    ]
    out = tmp_path / "traj.jsonl"
    assert main([*run_argv(tmp_path, replies), "--out", str(out)]) == 0
    out.read_bytes().decode("utf-8")  # strict
    (traj,) = load_trajectories(out)
    # A lone surrogate is bad input: rejected with the reason, and saved escaped.
    assert traj.turns[0].request is None
    assert "lone surrogate" in str(traj.turns[0].rejections)
    assert r"Mem\\ud800Store" in out.read_text(encoding="utf-8")
    assert traj.outcome.record() == {"outcome": "stop", "reason": "done \\udc80"}


def test_limits_are_exported_for_the_run(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(limits.ENV, "")
    out = tmp_path / "traj.jsonl"
    argv = [*run_argv(tmp_path, [STOP]), "--out", str(out), "--limits", "search_s=7"]
    assert main(argv) == 0
    assert limits.current().search_s == 7


def test_attributes_the_agent_writes_break_no_snapshot(tmp_path, capsys):
    """`printf '* working-tree-encoding=UTF-16\\n' > .gitattributes` made `git add` fail on
    every file without a byte order mark: a traceback and no trajectory. Now the harness's
    repository outranks it and the run ends as any other does."""
    replies = [
        {
            "tool": "bash",
            "args": {"command": "printf '* working-tree-encoding=UTF-16\\n' > .gitattributes"},
        },
        {"tool": "submit", "args": {"message": "done"}},
    ]
    out = tmp_path / "traj.jsonl"
    argv = ["run", "--instance", ID, "--arm", "current", "--model", script(tmp_path, replies)]
    assert main([*argv, "--out", str(out)]) == 0
    assert "resolved: false  turns: 2" in capsys.readouterr().out
    (traj,) = load_trajectories(out)
    assert traj.meta["grade"]["status"] == "unresolved"
    assert "+* working-tree-encoding=UTF-16" in traj.patch
