"""A workspace a model has written into, met by the harness's host-side git.

Each attack names a script that, if any git the harness runs started it, appends to a marker
outside the workspace; every test asserts the marker never appears and that snapshots,
checkpoints, patches and restores still do their job.
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import time
from pathlib import Path

import pytest

from pytest_toolpolicy.primitives import Workspace, WorkspaceError

FILES = {"app.py": "x = 1\n", "tests/test_app.py": "def test_x():\n    pass\n", "src/m.py": "m\n"}
MODEL = {
    "GIT_AUTHOR_NAME": "model",
    "GIT_AUTHOR_EMAIL": "m@sandbox",
    "GIT_COMMITTER_NAME": "model",
    "GIT_COMMITTER_EMAIL": "m@sandbox",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def model_git(cwd: Path, *args: str) -> None:
    """git as the model runs it in its sandbox: its own config, hooks and all."""
    env = {**MODEL, "PATH": os.environ["PATH"], "HOME": str(cwd)}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


@pytest.fixture
def marker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-host-secret")
    return tmp_path / "marker"


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return Workspace.create(root)


def script(where: Path, marker: Path, name: str = "evil.sh") -> Path:
    path = where / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\necho "$0 $* ${{OPENAI_API_KEY}}" >> {marker}\nexit 1\n')
    path.chmod(0o755)
    return path


def nested_repo(root: Path, rel: str, commit: bool = True) -> Path:
    sub = root / rel
    sub.mkdir(parents=True, exist_ok=True)
    model_git(sub, "init", "-q")
    (sub / "lib.py").write_text("v = 1\n")
    if commit:
        model_git(sub, "add", "-A")
        model_git(sub, "commit", "-qm", "model's own")
    return sub


def entries(ws: Workspace, tree: str) -> dict[str, str]:
    """path -> mode of every entry of ``tree``."""
    out = ws.git("ls-tree", "-r", "-z", tree).text
    return {line.partition("\t")[2]: line.split()[0] for line in filter(None, out.split("\0"))}


def exercise(ws: Workspace, edit: Path) -> str:
    """Every snapshot-taking operation, twice, with an edit in between; returns the patch."""
    first = ws.tree_hash()
    edit.write_text(edit.read_text() + "# edited\n")
    second = ws.tree_hash()
    assert second != first and ws.tree_hash() == second
    ref = ws.checkpoint()
    patch = ws.patch()
    assert ws.changed_files()
    edit.write_text("later\n")
    ws.restore(ref)
    assert ws.tree_hash() == second and edit.read_text().endswith("# edited\n")
    ws.restore(ws.base)
    assert (
        ws.patch() == ""
        and ws.tree_hash() == ws.git("rev-parse", f"{ws.base}^{{tree}}").text.strip()
    )
    return patch


NESTED_ATTACKS = {
    "fsmonitor": {"core.fsmonitor": "{s}"},
    "pager": {"core.pager": "{s}", "pager.diff": "{s}", "pager.status": "{s}"},
    "diff.external": {"diff.external": "{s}"},
    "sshCommand": {"core.sshCommand": "{s}", "remote.origin.url": "ssh://h/x.git"},
    "filter": {
        "filter.evil.clean": "{s}",
        "filter.evil.smudge": "{s}",
        "filter.evil.process": "{s}",
    },
    "hooksPath": {"core.hooksPath": "{hooks}"},
}


@pytest.mark.parametrize("attack", NESTED_ATTACKS)
def test_a_nested_repositorys_config_and_hooks_never_run(
    ws: Workspace, marker: Path, attack: str
) -> None:
    sub = nested_repo(ws.root, "vendor/lib")
    evil = script(ws.root, marker)
    hooks = ws.root / "hooks"
    for name in ("pre-commit", "post-checkout", "reference-transaction", "post-index-change"):
        script(hooks, marker, name)
        script(sub / ".git/hooks", marker, name)
    for key, value in NESTED_ATTACKS[attack].items():
        model_git(sub, "config", key, value.format(s=evil, hooks=hooks))
    (ws.root / ".gitattributes").write_text("* filter=evil diff=evil\n")
    (sub / ".gitattributes").write_text("* filter=evil diff=evil\n")
    patch = exercise(ws, sub / "lib.py")
    assert not marker.exists(), marker.read_text()
    assert "+++ b/vendor/lib/lib.py" in patch and "Subproject" not in patch


def test_nested_repositories_are_snapshotted_as_ordinary_files(ws: Workspace) -> None:
    nested_repo(ws.root, "empty", commit=False)  # `git add -A` fails outright on this one
    sub = nested_repo(ws.root, "vendor/lib")
    nested_repo(sub, "deeper", commit=False)
    (ws.root / "gitfile").mkdir()
    (ws.root / "gitfile/.git").write_text(f"gitdir: {sub / '.git'}\n")
    (ws.root / "gitfile/g.py").write_text("g\n")
    tree = ws.tree_hash()
    found = entries(ws, tree)
    for rel in ("empty/lib.py", "vendor/lib/lib.py", "vendor/lib/deeper/lib.py", "gitfile/g.py"):
        assert found[rel] == "100644"
    assert not [p for p in found if p.endswith(".git") or "toolpolicy" in p]
    # Content inside a committed nested repository counts, though its HEAD did not move.
    (sub / "lib.py").write_text("v = 2\n")
    assert ws.tree_hash() != tree
    exercise(ws, sub / "deeper/lib.py")
    assert not (ws.root / "vendor").exists() and not (ws.root / "empty").exists()


def test_restore_keeps_a_nested_git_dir_the_checkpoint_has_files_around(ws: Workspace) -> None:
    sub = nested_repo(ws.root, "vendor/lib")
    ref = ws.checkpoint()
    (sub / "lib.py").write_text("changed\n")
    (sub / "new.py").write_text("new\n")
    ws.restore(ref)
    assert (sub / "lib.py").read_text() == "v = 1\n" and not (sub / "new.py").exists()
    assert (sub / ".git/HEAD").is_file()  # not part of any snapshot: left as the model made it


def test_a_nested_git_link_to_a_host_repository_is_never_followed(
    ws: Workspace, tmp_path: Path, marker: Path
) -> None:
    host = nested_repo(tmp_path, "host-repo")
    model_git(host, "config", "core.fsmonitor", str(script(tmp_path, marker)))
    (ws.root / "linked").mkdir()
    (ws.root / "linked/.git").symlink_to(host / ".git")
    (ws.root / "linked/lib.py").write_text("mine\n")
    exercise(ws, ws.root / "linked/lib.py")
    assert not marker.exists()
    assert (host / "lib.py").read_text() == "v = 1\n" and (host / ".git/HEAD").is_file()


def test_host_side_hooks_in_the_workspaces_git_dir_never_run(ws: Workspace, marker: Path) -> None:
    for name in ("reference-transaction", "post-index-change", "post-checkout", "pre-commit"):
        script(ws.root / ".git/hooks", marker, name)
    exercise(ws, ws.root / "app.py")
    assert not marker.exists(), marker.read_text()


def test_host_git_config_and_environment_never_apply(
    ws: Workspace, tmp_path: Path, marker: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    evil = script(tmp_path, marker)
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(
        f'[filter "evil"]\n\tclean = {evil}\n\tsmudge = {evil}\n[core]\n\tfsmonitor = {evil}\n'
        f'[diff "evil"]\n\ttextconv = {evil}\n\tcommand = {evil}\n'
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", str(evil))
    (ws.root / ".gitattributes").write_text("* filter=evil diff=evil\n")  # the model's line
    exercise(ws, ws.root / "app.py")
    assert not marker.exists(), marker.read_text()


def test_a_git_config_changed_after_opening_is_refused(ws: Workspace, marker: Path) -> None:
    ws.tree_hash()
    config = ws.root / ".git/config"
    config.write_text(config.read_text() + f"[core]\n\tfsmonitor = {script(ws.root, marker)}\n")
    (ws.root / "app.py").write_text("y = 2\n")
    for step in (ws.tree_hash, ws.checkpoint, ws.patch):
        with pytest.raises(WorkspaceError, match="config changed since the workspace was opened"):
            step()
    assert not marker.exists()


def test_a_dot_git_turned_link_is_refused(ws: Workspace, tmp_path: Path) -> None:
    os.rename(ws.root / ".git", tmp_path / "moved.git")
    (ws.root / ".git").symlink_to(tmp_path / "moved.git")
    with pytest.raises(WorkspaceError, match=r"\.git is a symbolic link"):
        ws.tree_hash()
    with pytest.raises(WorkspaceError, match=r"\.git is a symbolic link"):
        Workspace(ws.root)


def test_fifos_sockets_and_links_never_stall_or_leak(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLPOLICY_LIMITS", "snapshot_s=30")
    secret = tmp_path / "host-secret.txt"
    secret.write_text("host secret\n")
    os.mkfifo(ws.root / "new.fifo")
    (ws.root / "app.py").unlink()
    os.mkfifo(ws.root / "app.py")  # a tracked path: git would refuse the whole `add`
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(ws.root / "s.sock"))
    (ws.root / "src/m.py").unlink()
    (ws.root / "src/m.py").symlink_to(secret)
    start = time.monotonic()
    tree = ws.tree_hash()
    assert time.monotonic() - start < 20
    found = entries(ws, tree)
    assert found["src/m.py"] == "120000" and "app.py" not in found
    assert not {"new.fifo", "s.sock"} & set(found)
    link = ws.git("cat-file", "blob", f"{tree}:src/m.py").text
    assert link == str(secret)  # the link itself, not what it points to
    assert set(ws.changed_files()) == {"app.py", "src/m.py"}
    ws.restore(ws.base)
    assert (ws.root / "app.py").read_text() == "x = 1\n"
    assert (ws.root / "src/m.py").read_text() == "m\n" and secret.read_text() == "host secret\n"


def test_restore_never_writes_through_a_linked_directory(ws: Workspace, tmp_path: Path) -> None:
    host = tmp_path / "host-dir"
    host.mkdir()
    (host / "keep.txt").write_text("keep\n")
    for path in (ws.root / "src/m.py", ws.root / "src"):
        path.unlink() if path.is_file() else path.rmdir()
    (ws.root / "src").symlink_to(host)
    assert entries(ws, ws.tree_hash())["src"] == "120000"
    ws.restore(ws.base)
    assert sorted(os.listdir(host)) == ["keep.txt"]
    assert stat.S_ISDIR(os.lstat(ws.root / "src").st_mode)
    assert (ws.root / "src/m.py").read_text() == "m\n"


def test_paths_git_refuses_to_store_do_not_break_a_snapshot(ws: Workspace) -> None:
    for rel in (".GIT/x", "GIT~1/y", "sub/.git /z"):
        (ws.root / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws.root / rel).write_text("odd\n")
    (ws.root / "fine.py").write_text("ok\n")
    found = entries(ws, ws.tree_hash())
    assert "fine.py" in found and not [p for p in found if p.lower().startswith((".git", "git~"))]
    ws.restore(ws.base)
    assert not (ws.root / "fine.py").exists()


def test_a_300_mb_file_hashes_within_the_limit(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    block = os.urandom(1 << 20)  # incompressible, so zlib would have to work for its keep
    with open(ws.root / "huge.bin", "wb") as handle:
        for _ in range(300):
            handle.write(block)
    monkeypatch.setenv("TOOLPOLICY_LIMITS", "snapshot_s=0.05")
    with pytest.raises(WorkspaceError, match=r"timed out after 0.05s \(limit snapshot_s"):
        ws.tree_hash()
    monkeypatch.delenv("TOOLPOLICY_LIMITS")
    start = time.monotonic()
    tree = ws.tree_hash()  # the killed git's lock files do not wedge the next snapshot
    took = time.monotonic() - start
    assert "huge.bin" in entries(ws, tree)
    assert took < 60, f"{took:.1f}s"


def test_attributes_of_the_work_tree_change_no_snapshot(tmp_path: Path) -> None:
    """A model's .gitattributes (an encoding git cannot convert, line endings, keyword
    expansion, binary diffs) neither breaks a snapshot nor changes what it stores: the
    repository the harness made outranks it."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    ws = Workspace.create(root)
    (root / ".gitattributes").write_text(
        "* working-tree-encoding=UTF-16\n*.py text eol=crlf ident\n*.py binary\n"
    )
    (root / "a.py").write_bytes(b"x = 2  # $Id$\r\n")
    patch = ws.patch()
    assert "+x = 2  # $Id$\r\n" in patch and "Binary files" not in patch
    ref = ws.checkpoint()
    (root / "a.py").write_text("changed\n")
    ws.restore(ref)
    assert (root / "a.py").read_bytes() == b"x = 2  # $Id$\r\n"
