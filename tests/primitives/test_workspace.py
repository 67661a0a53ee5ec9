import subprocess
import time
from pathlib import Path

import pytest

from pytest_toolpolicy.primitives import Workspace, WorkspaceError


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, check=True
    ).stdout


def test_create_commits_everything_as_base(repo: Path):
    ws = Workspace(repo)
    assert ws.patch() == ""
    assert "src/shop/cart.py" in git(repo, "ls-files")


def test_patch_is_the_diff_against_base_and_applies(repo: Path, tmp_path: Path):
    ws = Workspace(repo)
    (repo / "src/shop/cart.py").write_text("# changed\n")
    (repo / "new_file.py").write_text("x = 1\n")
    (repo / "tests/test_cart.py").unlink()
    patch = ws.patch()
    assert "+# changed" in patch and "new file mode" in patch and "deleted file mode" in patch
    assert set(ws.changed_files()) == {"src/shop/cart.py", "new_file.py", "tests/test_cart.py"}
    # HEAD and the user's branch never move; the patch grades against a fresh copy of base.
    assert git(repo, "rev-parse", "HEAD").strip() == ws.base
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    subprocess.run(["git", "apply", "-"], cwd=clone, input=patch, text=True, check=True)
    assert (clone / "new_file.py").read_text() == "x = 1\n"
    assert not (clone / "tests/test_cart.py").exists()


def _into_a_new_second() -> None:
    time.sleep(1.02 - time.time() % 1)


def test_a_rewrite_within_the_second_of_its_staging_is_seen(repo: Path):
    """git compares whole seconds of stat data and trusts them only for files older than the
    index: a same-size rewrite in the second of the last staging, looked at in a later second,
    must still count as a change (it once did not: the index was copied with a new mtime)."""
    ws = Workspace(repo)
    cart = repo / "src/shop/cart.py"
    _into_a_new_second()
    cart.write_text("version = 1\n")
    ref = ws.checkpoint("one")
    one = ws.tree_hash()
    cart.write_text("version = 2\n")  # same size, same inode, same second
    _into_a_new_second()
    assert ws.tree_hash() != one
    ws.restore(ref)
    assert cart.read_text() == "version = 1\n"


def test_checkpoint_and_restore_round_trip(repo: Path):
    ws = Workspace(repo)
    cart = repo / "src/shop/cart.py"
    cart.write_text("version = 1\n")
    ref = ws.checkpoint("one")
    assert ref == "refs/toolpolicy/checkpoints/one"
    cart.write_text("version = 2\n")
    (repo / "later.py").write_text("y = 2\n")
    (repo / "pkg").mkdir()
    (repo / "pkg/deep.py").write_text("z = 3\n")
    ws.restore(ref)
    assert cart.read_text() == "version = 1\n"
    assert not (repo / "later.py").exists() and not (repo / "pkg").exists()
    ws.restore(ws.base)
    assert "class Cart" in cart.read_text()
    assert ws.patch() == ""


def test_tree_hash_is_a_function_of_content(repo: Path):
    ws = Workspace(repo)
    base = ws.tree_hash()
    (repo / "a.py").write_text("a = 1\n")
    changed = ws.tree_hash()
    assert changed != base
    (repo / "a.py").unlink()
    assert ws.tree_hash() == base


def test_checkpoint_ids_are_deterministic(repo: Path):
    ws = Workspace(repo)
    (repo / "a.py").write_text("a = 1\n")
    first = git(repo, "rev-parse", ws.checkpoint("x")).strip()
    second = git(repo, "rev-parse", ws.checkpoint("y")).strip()
    assert first == second  # same tree, same parent, fixed identity and date


def test_errors_name_the_problem(tmp_path: Path):
    with pytest.raises(WorkspaceError, match="not found"):
        Workspace(tmp_path / "missing")
    with pytest.raises(WorkspaceError, match="not a git repository"):
        Workspace(tmp_path)
    ws = Workspace.create(tmp_path)
    with pytest.raises(WorkspaceError, match="failed"):
        ws.restore("refs/toolpolicy/checkpoints/nope")


def test_advance_base_moves_what_the_patch_is_against(repo: Path):
    ws = Workspace(repo)
    old = ws.base
    (repo / "visible_test.py").write_text("def test_x():\n    pass\n")
    count = git(repo, "rev-list", "--count", "HEAD").strip()
    new = ws.advance_base("tests made visible")
    assert new != old and ws.base == new
    # HEAD stays on the instance's commit: the history reads as it does there.
    assert git(repo, "rev-parse", "HEAD").strip() == old
    assert git(repo, "rev-list", "--count", "HEAD").strip() == count
    assert git(repo, "rev-parse", "refs/toolpolicy/start").strip() == new
    assert ws.patch() == ""
    (repo / "src/shop/cart.py").write_text("# changed\n")
    assert ws.changed_files() == ["src/shop/cart.py"]
    # The harness's change staged, the agent's own the only unstaged one.
    status = git(repo, "status", "--porcelain").splitlines()
    assert sorted(status) == [" M src/shop/cart.py", "A  visible_test.py"]


def test_objects_written_in_scratch_are_gone_after(repo: Path):
    """Grading writes trees holding tests the agent was not shown: into a store of its own."""
    ws = Workspace(repo)
    ref = ws.checkpoint()
    with ws.scratch_objects():
        (repo / "hidden_test.py").write_text("def test_hidden():\n    assert 'SECRET-42'\n")
        secret = ws.checkpoint("inside")  # a ref set inside names a scratch object...
        assert ws.git("cat-file", "-p", f"{secret}:hidden_test.py").text.startswith("def")
        ws.restore(ref)
    assert not (repo / "hidden_test.py").exists()
    listing = git(repo, "cat-file", "--batch-all-objects", "--batch-check")
    blobs = [line.split()[0] for line in listing.splitlines() if " blob " in line]
    contents = [
        subprocess.run(["git", "cat-file", "-p", b], cwd=repo, capture_output=True).stdout
        for b in blobs
    ]
    assert contents and not any(b"SECRET-42" in data for data in contents)
    assert ws.git("cat-file", "-e", secret, ok=range(256)).returncode  # ...gone with it


def test_the_final_patch_of_a_workspace_past_a_snapshot_is_a_recorded_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_toolpolicy.primitives.workspace import WorkspaceError, final_patch

    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    ws = Workspace.create(root)
    (root / "a.py").write_text("x = 2\n")
    assert final_patch(ws)[0].endswith("+x = 2\n") and final_patch(ws)[1] == {}

    def too_slow(self: Workspace) -> str:
        raise WorkspaceError("git add timed out after 120s (limit snapshot_s)")

    monkeypatch.setattr(Workspace, "patch", too_slow)
    assert final_patch(ws) == (
        "",
        {"snapshot_error": "git add timed out after 120s (limit snapshot_s)"},
    )
    assert final_patch(None) == ("", {})
