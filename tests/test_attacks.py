"""The harness's trust boundary, attacked as a hostile model would, through the public surfaces.

A scripted model drives the real loops, the real sandbox and the real host-side steps
(snapshots, patch, grading, memo replay) over a bundled instance. Each attack plants something
in its workspace from inside the sandbox and then waits for the harness to trip over it on the
host. Every test asserts that nothing of the host changed and that nothing of the host reached
an observation, trajectory, memo or report. A "host file" is a file outside the workspace in
this test's own temporary directory; a "marker" is a file a planted script would create on the
host if the harness ever ran it there.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from pytest_toolpolicy.cli import main

ID = "bundled__memstore-1"
CANARY = "sk-canary-0123456789abcdef"
SECRET = "HOST-SECRET-7f3a"
TEST_AB = Path(__file__).parent.parent / "evals" / "test_ab.py"


def _script(tmp_path: Path, replies: list[dict]) -> str:
    path = tmp_path / "replies.jsonl"
    path.write_text("".join(json.dumps(json.dumps(r)) + "\n" for r in replies))
    return f"scripted:{path}"


def _run(tmp_path: Path, arm: str, replies: list[dict]) -> tuple[int, str]:
    out = tmp_path / "out" / "trajectory.jsonl"
    out.parent.mkdir()
    argv = ["run", "--instance", ID, "--arm", arm, "--model", _script(tmp_path, replies)]
    code = main([*argv, "--out", str(out)])
    return code, out.read_text(encoding="utf-8", errors="replace") if out.exists() else ""


def _bash(command: str) -> dict:
    return {"tool": "bash", "args": {"command": command}}


def _shell(command: str) -> dict:
    return {"tool": "run_test", "args": {"target": command}}


def _hidden(path: Path) -> str:
    """``path`` as shell that prints it, with no "/" in sight: run_test's best-effort check of
    shell targets refuses paths that leave the workspace, and an attacker writes around it."""
    return "\"$(printf '" + str(path).replace("/", "\\057") + "')\""


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A script that records its environment at the marker path when run; a key in the
    harness's environment that a host-side step must never pass on."""
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    marker = tmp_path / "marker"
    script = tmp_path / "planted.sh"
    script.write_text(f"#!/bin/sh\nenv > {marker}\ncat >/dev/null\nexit 0\n")
    script.chmod(0o755)
    return marker


def _evil(marker: Path) -> str:
    """Shell that writes, inside the workspace, a copy of the planted script (a model cannot
    reach the host's copy) and prints its absolute path, which the host sees unchanged."""
    return (
        f"printf '#!/bin/sh\\nenv > {marker}\\ncat >/dev/null\\nexit 0\\n' > evil.sh"
        " && chmod +x evil.sh"
    )


GIT_CONFIG = (
    "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"
    "\tfsmonitor = ./evil.sh\n\tpager = ./evil.sh\n[diff]\n\texternal = ./evil.sh\n"
)
NESTED_CONFIGS = {
    "fsmonitor": "git config core.fsmonitor $PWD/../evil.sh",
    "pager": "git config core.pager $PWD/../evil.sh",
    "external_diff": "git config diff.external $PWD/../evil.sh",
    "filter": (
        "git config filter.x.clean $PWD/../evil.sh && git config filter.x.smudge $PWD/../evil.sh"
        " && echo '* filter=x diff=x' > .gitattributes && git config diff.x.command $PWD/../evil.sh"
    ),
    "ssh": "git config core.sshCommand $PWD/../evil.sh",
    "hooks": (
        "git config core.hooksPath $PWD/../hooks && mkdir -p ../hooks && for h in pre-commit"
        " post-checkout post-commit reference-transaction post-index-change; do"
        " cp ../evil.sh ../hooks/$h; done"
    ),
}


@pytest.mark.parametrize("attack", sorted(NESTED_CONFIGS))
def test_a_nested_repository_config_never_runs_on_the_host(
    tmp_path: Path, planted: Path, attack: str
) -> None:
    """The model makes a nested repository (with a commit and without) whose config names a
    script of the workspace; the harness then snapshots, diffs and grades the workspace."""
    command = (
        f"{_evil(planted)} && mkdir -p sub && cd sub && git init -q"
        " && echo hello > file.txt && git add file.txt"
        " && git -c user.name=m -c user.email=m@x commit -qm one && echo changed > file.txt"
        f" && {NESTED_CONFIGS[attack]}"
    )
    code, trajectory = _run(tmp_path, "current", [_bash(command), {"tool": "submit"}])
    assert not planted.exists(), f"host ran the workspace's {attack}: {planted.read_text()[:200]}"
    assert code == 0, trajectory[-2000:]
    assert '"outcome": "stop"' in trajectory  # the run went on: nested repos break nothing
    assert CANARY not in trajectory


def test_an_empty_nested_repository_breaks_nothing(tmp_path: Path) -> None:
    command = "git init -q empty && echo data > empty/file.txt && echo more > new.txt"
    code, trajectory = _run(tmp_path, "current", [_bash(command), {"tool": "submit"}])
    assert code == 0, trajectory[-2000:]
    assert '"outcome": "stop"' in trajectory
    assert "new.txt" in json.loads(trajectory)["patch"]


def test_the_users_own_git_config_is_not_applied_to_a_workspace(
    tmp_path: Path, planted: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A workspace's .gitattributes naming a filter that the user's global config defines (as
    git-lfs does) must not make host-side git run that filter over the model's files."""
    home = tmp_path / "home"
    home.mkdir()
    script = planted.parent / "planted.sh"
    (home / ".gitconfig").write_text(
        f'[filter "x"]\n\tclean = {script}\n\tsmudge = {script}\n'
        f"[core]\n\tfsmonitor = {script}\n\tpager = {script}\n[diff]\n\texternal = {script}\n"
    )
    monkeypatch.setenv("HOME", str(home))
    command = "echo '* filter=x' > .gitattributes && echo data > new.txt"
    code, trajectory = _run(tmp_path, "current", [_bash(command), {"tool": "submit"}])
    assert not planted.exists(), planted.read_text()[:200]
    assert code == 0, trajectory[-2000:]


def test_a_module_swapped_for_a_link_to_a_host_file_is_never_read(tmp_path: Path) -> None:
    host = tmp_path / "host.py"
    host.write_text("".join(f"SECRET_{n} = '{SECRET}'\n" for n in range(200)))
    replies = [
        _shell(f"rm memstore/entry.py && ln -s {_hidden(host)} memstore/entry.py"),
        {"tool": "read_entity", "args": {"selector": "memstore.entry.Entry", "body": True}},
        {"tool": "read_entity", "args": {"selector": "memstore.entry", "body": True}},
        {"tool": "stop", "args": {"reason": "done"}},
    ]
    _, trajectory = _run(tmp_path, "policy", replies)
    assert trajectory, "no trajectory written"
    assert SECRET not in trajectory


def test_the_baseline_cannot_read_or_write_through_links_or_into_git(
    tmp_path: Path, planted: Path
) -> None:
    host = tmp_path / "host.txt"
    host.write_text(f"{SECRET}\n")
    replies = [
        _bash(f"ln -s {host} leak.txt && ln -s {tmp_path} hostdir"),
        {"tool": "read_file", "args": {"path": "leak.txt"}},
        {"tool": "read_file", "args": {"path": "hostdir/host.txt"}},
        {"tool": "write_file", "args": {"path": "leak.txt", "content": "overwritten"}},
        {"tool": "edit_file", "args": {"path": "hostdir/host.txt", "old": "HOST", "new": "X"}},
        _bash(_evil(planted)),
        {"tool": "write_file", "args": {"path": ".git/config", "content": GIT_CONFIG}},
        {"tool": "write_file", "args": {"path": "sub/.git/hooks/pre-commit", "content": "x"}},
        {"tool": "submit"},
    ]
    code, trajectory = _run(tmp_path, "current", replies)
    assert not planted.exists(), "a host-side write into .git made the host run the script"
    assert code == 0, trajectory[-2000:]
    assert host.read_text() == f"{SECRET}\n"
    assert SECRET not in trajectory


def test_a_run_that_fills_the_workspace_is_stopped_and_said_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLPOLICY_LIMITS", "workspace_mb=40")
    fill = "for i in 1 2 3; do head -c 30000000 /dev/zero > big$i.bin; done; echo wrote"
    code, trajectory = _run(tmp_path, "current", [_bash(fill), {"tool": "submit"}])
    assert code == 0, trajectory[-2000:]
    assert "workspace_mb" in trajectory  # the observation names the bound it hit


def test_memo_replay_never_writes_through_a_link_the_sandbox_made(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    """The original item stores a test run's effect; its ablation variant replays it onto a
    workspace where a first, unmemoizable run has left a link to a host file at that path."""
    host = tmp_path / "host.txt"
    host.write_text(f"{SECRET}\n")
    one_item = [
        _shell(f"ln -s {_hidden(host)} victim.txt && printf '\\000\\377' > bin.dat"),
        _shell("rm victim.txt && echo pwned > victim.txt"),
        {"tool": "stop", "args": {"reason": "done"}},
    ]
    model = _script(tmp_path, one_item + one_item)
    pytester.makepyfile(test_ab=TEST_AB.read_text(encoding="utf-8"))
    report = pytester.path / "report"
    result = pytester.runpytest(
        "--toolpolicy=policy",
        f"--toolpolicy-model={model}",
        "--toolpolicy-ablate=trigger.lint",
        f"--toolpolicy-report={report}",
        "-k",
        "memstore-1-",
        "-p",
        "no:randomly",
    )
    assert host.read_text() == f"{SECRET}\n", "a host file was overwritten by memo replay"
    result.assert_outcomes(passed=2)
    memo = sqlite3.connect(report / "memo.sqlite")
    stored = "".join(value for (value,) in memo.execute("SELECT value FROM memo"))
    assert SECRET not in stored
    assert SECRET not in (report / "trajectories.jsonl").read_text(errors="replace")
    pages = list((report / "view").rglob("*.html"))
    assert pages and not any(SECRET in p.read_text(errors="replace") for p in pages)
