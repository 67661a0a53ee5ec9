"""Nothing after the starting point: a workspace holds its base commit's ancestry and nothing
else, whatever the mirror holds (the upstream fix, later branches and tags, notes, a stash,
reflogs), seen from the host and from inside the sandbox, for a real mirror and for every
bundled instance; what git says of the past is what it says at that commit."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from pytest_toolpolicy.bench import load_instances, workspaces
from pytest_toolpolicy.bench.instance import Instance
from pytest_toolpolicy.bench.workspaces import cached_checkout, materialize
from pytest_toolpolicy.primitives.sandbox import Sandbox

from .gitmirrors import BASE, FIXED_OPS, git, real_instance, write

SANDBOX = Sandbox.from_env()
needs_bwrap = pytest.mark.skipif(SANDBOX.mode != "bwrap", reason="needs bubblewrap")


def commits_visible(root: Path) -> set[str]:
    """Every commit object the repository at ``root`` can read, as an agent would list them."""
    out = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch-check"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return {line.split()[0] for line in out.splitlines() if line.split()[1] == "commit"}


def ancestry(root: Path, commit: str) -> set[str]:
    return set(git(root, "rev-list", commit).split())


@pytest.fixture
def history(tmp_path: Path) -> tuple[Path, Instance, dict[str, str]]:
    """A mirror whose base commit has a past (an old tag) and a future: the fix on main, a
    tag on it, a later branch, a note, a stash, a replace ref and reflogs."""
    work = tmp_path / "mirrors" / "acme__calc"
    work.mkdir(parents=True)
    git(work, "init", "-q", "-b", "main")
    write(work, BASE)
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "first")
    first = git(work, "rev-parse", "HEAD")
    git(work, "tag", "-a", "v1.0", "-m", "release 1.0")
    write(work, {"README": "calc\n"})
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "base")
    base = git(work, "rev-parse", "HEAD")
    write(work, {"calc/ops.py": FIXED_OPS})
    git(work, "commit", "-qam", "fix: div returns a float")
    fix = git(work, "rev-parse", "HEAD")
    git(work, "tag", "v1.1")
    git(work, "notes", "add", "-m", "the answer is a / b", fix)
    git(work, "checkout", "-q", "-b", "later", base)
    write(work, {"later.txt": "later\n"})
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "later work")
    later = git(work, "rev-parse", "HEAD")
    write(work, {"calc/ops.py": FIXED_OPS})
    git(work, "stash", "-q")
    git(work, "replace", first, later)
    git(work, "checkout", "-q", "main")
    git(work, "pack-refs", "--all")
    instance = real_instance("acme/calc", base, "", "")
    return work.parent, instance, {"first": first, "base": base, "fix": fix, "later": later}


def test_the_workspace_holds_the_past_and_nothing_else(
    history: tuple[Path, Instance, dict[str, str]], tmp_path: Path
) -> None:
    repos, instance, commits = history
    mirror = repos / "acme__calc"
    assert commits["fix"] in commits_visible(mirror)  # the mirror itself has the future
    ws = materialize(instance, tmp_path / "items", repos=repos)
    past = ancestry(mirror, commits["base"])
    assert commits_visible(ws.root) == past
    checkout = cached_checkout(instance, repos=repos)
    assert commits_visible(checkout) == past  # what the workspace borrows
    refs = git(ws.root, "for-each-ref", "--format=%(refname)").split()
    assert refs == ["refs/tags/v1.0"]  # v1.1 tags the fix: not kept
    log = git(ws.root, "log", "--all", "--reflog", "--format=%H").split()
    assert set(log) == past
    assert not (ws.root / ".git" / "FETCH_HEAD").exists()
    assert not (checkout / ".git" / "FETCH_HEAD").exists()
    for gone in ("fix", "later"):
        assert subprocess.run(
            ["git", "show", commits[gone]], cwd=ws.root, capture_output=True
        ).returncode, gone
    # The past reads as it does at the commit.
    assert git(ws.root, "describe", "--tags") == "v1.0-1-g" + commits["base"][:7]
    assert git(ws.root, "rev-list", "--count", "HEAD") == "2"
    assert git(ws.root, "log", "--format=%s") == "base\nfirst"
    assert "a // b" in git(ws.root, "blame", "calc/ops.py")


def test_a_tag_newer_than_the_commit_is_left_out(tmp_path: Path) -> None:
    """SWE-bench keeps only tags no newer than the base commit: a tag added later to an old
    commit says when that commit was released, which the base commit's day did not know."""
    work = tmp_path / "mirrors" / "acme__calc"
    work.mkdir(parents=True)
    git(work, "init", "-q", "-b", "main")
    write(work, BASE)
    git(work, "add", "-A")
    env = {**os.environ, "GIT_COMMITTER_DATE": "2030-01-01T00:00:00+0000"}
    subprocess.run(["git", "commit", "-q", "-m", "from the future"], cwd=work, env=env, check=True)
    future = git(work, "rev-parse", "HEAD")
    git(work, "tag", "late", future)
    git(work, "commit", "-q", "--allow-empty", "-m", "base")
    base = git(work, "rev-parse", "HEAD")
    ws = materialize(
        real_instance("acme/calc", base, "", ""), tmp_path / "items", repos=work.parent
    )
    assert git(ws.root, "tag") == ""


@needs_bwrap
def test_a_sandboxed_run_sees_only_the_past(
    history: tuple[Path, Instance, dict[str, str]], tmp_path: Path
) -> None:
    """The view every process in the sandbox has: the workspace and the store it borrows."""
    repos, instance, commits = history
    ws = materialize(instance, tmp_path / "items", repos=repos)
    script = (
        "git cat-file --batch-all-objects --batch-check | awk '$2 == \"commit\" {print $1}'; "
        "echo refs; git for-each-ref --format='%(refname)'; git rev-list --count HEAD"
    )
    run = SANDBOX.run(
        ["/bin/sh", "-c", script],
        cwd=ws.root,
        writable=ws.root,
        stdin=None,
        timeout=60,
        merge_stderr=True,
    )
    seen, _, rest = run.stdout.decode().partition("refs\n")
    assert run.exit_code == 0, run.stdout
    assert set(seen.split()) == ancestry(repos / "acme__calc", commits["base"])
    assert rest.split() == ["refs/tags/v1.0", "2"]


def test_every_bundled_instance_sees_only_its_past(tmp_path: Path) -> None:
    """A bundled project is one history: its next instance starts from this one's fix."""
    instances = load_instances("bundled").instances
    assert len(instances) >= 25
    hidden = 0
    for instance in instances:
        ws = materialize(instance, tmp_path / "items", name="ws")
        mirror = workspaces._bundled_mirror(instance, None)  # the project's whole history
        past = ancestry(mirror, instance.base_commit)
        assert commits_visible(ws.root) == past, instance.instance_id
        hidden += len(commits_visible(mirror) - past)
    assert hidden > 0  # the histories do hold what each workspace must not
