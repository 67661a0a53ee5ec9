import json
import os
import shutil
from pathlib import Path

import pytest

from pytest_toolpolicy import limits
from pytest_toolpolicy.bench.load import load_instances
from pytest_toolpolicy.cli import main
from pytest_toolpolicy.types import load_trajectories

from ..malformed import one_line

ID = "bundled__memstore-1"
BUNDLED = Path(__file__).parents[2] / "pytest_toolpolicy" / "bench" / "bundled" / "instances"


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
