from __future__ import annotations

import dataclasses
import os
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pytest_toolpolicy.bench import workspaces
from pytest_toolpolicy.bench.instance import Instance
from pytest_toolpolicy.bench.workspaces import (
    WorkspaceSetupError,
    cached_checkout,
    materialize,
    mirror_name,
)
from pytest_toolpolicy.primitives.safefs import remove_tree

from .gitmirrors import BASE, git, make_bundled, make_mirror, patches, real_instance


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Replaces the suite's own: the default cache is this one too (never the user's)."""
    monkeypatch.setenv("TOOLPOLICY_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def real(tmp_path: Path, bare: bool) -> tuple[Path, Instance, str]:
    mirror, base, fix = make_mirror(tmp_path / "mirrors" / "acme__calc", bare=bare)
    scratch = tmp_path / "scratch"
    git(tmp_path, "clone", "-q", str(mirror), str(scratch))
    git(scratch, "checkout", "-q", base)
    gold, test_patch = patches(scratch)
    return mirror.parent, real_instance("acme/calc", base, gold, test_patch), fix


def test_mirror_name() -> None:
    assert mirror_name("psf/requests") == "psf__requests"


@pytest.mark.parametrize("bare", [False, True], ids=["worktree-mirror", "bare-mirror"])
def test_real_instance_at_base_commit(tmp_path: Path, cache: Path, bare: bool) -> None:
    repos, instance, fix = real(tmp_path, bare)
    ws = materialize(instance, tmp_path / "items", repos=repos, cache_dir=cache)
    assert ws.base == instance.base_commit != fix
    assert git(ws.root, "rev-parse", "HEAD") == instance.base_commit
    assert "a // b" in (ws.root / "calc/ops.py").read_text()
    assert ws.patch() == ""


def test_items_are_independent_and_the_cache_is_reused(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repos, instance, _ = real(tmp_path, bare=True)
    builds = []
    publish = workspaces._publish
    monkeypatch.setattr(workspaces, "_publish", lambda e, b: builds.append(e) or publish(e, b))
    one = materialize(instance, tmp_path / "items", repos=repos, cache_dir=cache)
    entry = cached_checkout(instance, repos=repos, cache_dir=cache)
    stamp = entry.stat().st_mtime_ns
    two = materialize(instance, tmp_path / "items", repos=repos, cache_dir=cache)
    assert builds == [entry] and entry.stat().st_mtime_ns == stamp
    assert one.root != two.root
    (one.root / "calc/ops.py").write_text("broken = True\n")
    ref = one.checkpoint("mine")
    assert "a // b" in (two.root / "calc/ops.py").read_text()
    assert two.patch() == "" and "a // b" in (entry / "calc/ops.py").read_text()
    with pytest.raises(AssertionError, match="single revision"):  # refs are per item
        git(two.root, "rev-parse", "--verify", ref)


def test_concurrent_materialization_of_one_commit(tmp_path: Path, cache: Path) -> None:
    repos, instance, _ = real(tmp_path, bare=False)
    with ThreadPoolExecutor(4) as pool:
        futures = [
            pool.submit(materialize, instance, tmp_path / "items", repos=repos, cache_dir=cache)
            for _ in range(4)
        ]
        roots = {f.result().root for f in futures}
    assert len(roots) == 4
    entries = list((cache / "repos" / "acme__calc" / "history").iterdir())
    assert [e.name for e in entries] == [instance.base_commit]


def test_clone_from_url_when_no_mirror_dir(tmp_path: Path, cache: Path) -> None:
    repos, instance, _ = real(tmp_path, bare=True)
    template = f"file://{repos}/{{repo}}"
    moved = dataclasses.replace(instance, repo="acme__calc")
    ws = materialize(moved, tmp_path / "items", cache_dir=cache, url_template=template)
    assert ws.base == instance.base_commit
    assert (cache / "repos" / "acme__calc.git").is_dir()


def test_base_commit_missing_from_mirror(tmp_path: Path, cache: Path) -> None:
    repos, instance, _ = real(tmp_path, bare=True)
    ghost = dataclasses.replace(instance, base_commit="1" * 40)
    with pytest.raises(WorkspaceSetupError, match=r"acme__calc-1: base commit 1{40} not found"):
        materialize(ghost, tmp_path / "items", repos=repos, cache_dir=cache)
    assert list((tmp_path / "items").iterdir()) == []


def test_a_partial_clone_mirror_is_an_error_naming_the_files_it_lacks(
    tmp_path: Path, cache: Path
) -> None:
    """A mirror cloned with a blob size filter (as snapshot services make them) checks out
    with exit 0 and without the files it lacks; every later snapshot would then fail."""
    repos, instance, _ = real(tmp_path, bare=True)
    full = repos / "acme__calc"
    git(full, "config", "uploadpack.allowFilter", "true")
    mirror = tmp_path / "partial" / "acme__calc"
    source = f"file://{full}"
    git(tmp_path, "clone", "-q", "--bare", "--filter=blob:limit=10", source, str(mirror))
    remove_tree(full, within=tmp_path)  # the promisor is gone, as a snapshot's origin is
    with pytest.raises(
        WorkspaceSetupError, match=r"lacks the contents of \d+ file\(s\) .*incomplete"
    ):
        materialize(instance, tmp_path / "items", repos=mirror.parent, cache_dir=cache)


def test_mirror_missing(tmp_path: Path, cache: Path) -> None:
    _, instance, _ = real(tmp_path, bare=True)
    with pytest.raises(WorkspaceSetupError, match=r"acme__calc-1: no mirror for acme/calc at"):
        materialize(instance, tmp_path / "items", repos=tmp_path / "elsewhere", cache_dir=cache)


def test_clone_failure_carries_gits_words(tmp_path: Path, cache: Path) -> None:
    _, instance, _ = real(tmp_path, bare=True)
    template = f"file://{tmp_path}/nowhere/{{repo}}"
    with pytest.raises(WorkspaceSetupError, match=r"git clone failed: .*(does not|not found)"):
        materialize(instance, tmp_path / "items", cache_dir=cache, url_template=template)


def test_bundled_instance(tmp_path: Path, cache: Path) -> None:
    """The real path: the project's stream imported as a mirror, a cached checkout, a clone."""
    from pytest_toolpolicy.bench import load_instances

    make_bundled(tmp_path / "instances", "bundled__calc-1")
    (instance,) = load_instances(f"bundled:{tmp_path / 'instances'}").instances
    assert instance.path is not None and not (instance.path / "repo").exists()
    ws = materialize(instance, tmp_path / "items", cache_dir=cache)
    assert ws.base == instance.base_commit and ws.root.parent == tmp_path / "items"
    assert git(ws.root, "rev-parse", "HEAD") == instance.base_commit
    checkout = cached_checkout(instance, cache_dir=cache)
    assert checkout == cache / "repos" / "bundled__calc" / "history" / instance.base_commit
    alternates = (ws.root / ".git/objects/info/alternates").read_text()
    assert str(checkout / ".git/objects") in alternates  # a shared clone of the checkout
    (ws.root / "calc/ops.py").write_text("x = 1\n")
    again = materialize(instance, tmp_path / "items", cache_dir=cache)
    assert (again.root / "calc/ops.py").read_text() == BASE["calc/ops.py"]


def test_bundled_base_commit_missing_from_its_stream(tmp_path: Path, cache: Path) -> None:
    from pytest_toolpolicy.bench import load_instances

    make_bundled(tmp_path / "instances", "bundled__calc-1")
    (instance,) = load_instances(f"bundled:{tmp_path / 'instances'}").instances
    ghost = dataclasses.replace(instance, base_commit="1" * 40)
    with pytest.raises(
        WorkspaceSetupError,
        match=r"bundled__calc-1: base commit 1{40} not found in .*/repos/calc\.fi \(imported to"
        r" .*\): the stream and instance.json disagree",
    ):
        materialize(ghost, tmp_path / "items", cache_dir=cache)
    assert list((tmp_path / "items").iterdir()) == []


def evil_script(tmp_path: Path, marker: Path, name: str) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\necho "$0 ${{OPENAI_API_KEY:-}}" >> {marker}\n')
    path.chmod(0o755)
    return path


def test_host_git_settings_never_run_while_materializing(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repos, instance, _ = real(tmp_path, bare=True)
    marker = tmp_path / "marker"
    templates = tmp_path / "templates"
    evil_script(templates / "hooks", marker, "post-checkout")
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(f"[init]\n\ttemplateDir = {templates}\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_SSH_COMMAND", str(evil_script(tmp_path, marker, "ssh")))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-host-secret")
    ws = materialize(instance, tmp_path / "items", repos=repos, cache_dir=cache)
    assert ws.base == instance.base_commit
    with pytest.raises(WorkspaceSetupError, match="transport 'ssh' not allowed"):
        materialize(
            dataclasses.replace(instance, repo="acme/other"),
            tmp_path / "items",
            cache_dir=cache,
            url_template="ssh://git.invalid/{repo}.git",
        )
    assert not marker.exists(), marker.read_text()


def leftover(root: Path, host: Path) -> None:
    """What a sandboxed run may leave: links to host paths, directories it locked up."""
    (root / "a/b/c").mkdir(parents=True)
    (root / "a/b/c/f.py").write_text("x\n")
    (root / "r").mkdir()
    (root / "r/g.py").write_text("y\n")
    (root / "a/to-host").symlink_to(host)
    (root / "host-file").symlink_to(host / "keep.txt")
    for path, mode in ((root / "a/b/c", 0), (root / "a/b", 0), (root / "r", 0o500)):
        path.chmod(mode)


@pytest.fixture
def host(tmp_path: Path) -> Path:
    path = tmp_path / "host"
    path.mkdir()
    (path / "keep.txt").write_text("keep\n")
    return path


def test_a_leftover_item_directory_is_replaced(tmp_path: Path, host: Path) -> None:
    from pytest_toolpolicy.bench import load_instances

    make_bundled(tmp_path / "instances", "bundled__calc-1")
    (instance,) = load_instances(f"bundled:{tmp_path / 'instances'}").instances
    ws = materialize(instance, tmp_path / "items", name="item")
    leftover(ws.root, host)
    again = materialize(instance, tmp_path / "items", name="item")
    assert again.root == ws.root and not (again.root / "a").exists()
    assert sorted(os.listdir(host)) == ["keep.txt"] and (host / "keep.txt").read_text() == "keep\n"


def test_remove_tree_opens_up_locked_directories_without_privileges(
    tmp_path: Path, host: Path
) -> None:
    """As a user that mode 000 really stops (root would sail through it)."""
    if os.geteuid() != 0:
        (tmp_path / "items/item").mkdir(parents=True)
        leftover(tmp_path / "items/item", host)
        remove_tree(tmp_path / "items/item", within=tmp_path)
        assert os.listdir(tmp_path / "items") == []
        return
    with tempfile.TemporaryDirectory() as shared:  # pytest's own tmp is root's alone
        items = Path(shared) / "items"
        (items / "item").mkdir(parents=True)
        leftover(items / "item", host)
        os.chmod(shared, 0o755)
        subprocess.run(["chown", "-R", "-h", "65534:65534", str(items)], check=True)
        pid = os.fork()  # the child drops to nobody (whose reach the stdlib may be beyond)
        if pid == 0:
            code = 1
            try:
                os.setgid(65534)
                os.setuid(65534)
                remove_tree(items / "item", within=items)
                code = 0
            finally:
                os._exit(code)
        assert os.waitpid(pid, 0)[1] == 0
        assert os.listdir(items) == []
    assert (host / "keep.txt").read_text() == "keep\n"
