from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pytest_toolpolicy.bench import envs, workspaces
from pytest_toolpolicy.bench.instance import Instance
from pytest_toolpolicy.bench.workspaces import (
    WorkspaceSetupError,
    cached_checkout,
    materialize,
    mirror_name,
)

from .gitmirrors import BASE, git, make_bundled, make_mirror, patches, real_instance


@pytest.fixture
def cache(tmp_path: Path) -> Path:
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
    entries = list((cache / "repos" / "acme__calc").iterdir())
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


def test_mirror_missing(tmp_path: Path, cache: Path) -> None:
    _, instance, _ = real(tmp_path, bare=True)
    with pytest.raises(WorkspaceSetupError, match=r"acme__calc-1: no mirror for acme/calc at"):
        materialize(instance, tmp_path / "items", repos=tmp_path / "elsewhere", cache_dir=cache)


def test_clone_failure_carries_gits_words(tmp_path: Path, cache: Path) -> None:
    _, instance, _ = real(tmp_path, bare=True)
    template = f"file://{tmp_path}/nowhere/{{repo}}"
    with pytest.raises(WorkspaceSetupError, match=r"git clone failed: .*(does not|not found)"):
        materialize(instance, tmp_path / "items", cache_dir=cache, url_template=template)


def test_bundled_instance(tmp_path: Path) -> None:
    from pytest_toolpolicy.bench import load_instances

    make_bundled(tmp_path / "instances", "bundled__calc-1")
    (instance,) = load_instances(f"bundled:{tmp_path / 'instances'}").instances
    ws = materialize(instance, tmp_path / "items")
    assert ws.base == instance.base_commit and ws.root.parent == tmp_path / "items"
    (ws.root / "calc/ops.py").write_text("x = 1\n")
    assert "a // b" in (materialize(instance, tmp_path / "items").root / "calc/ops.py").read_text()
    assert "a // b" in (instance.path / "repo/calc/ops.py").read_text()


def test_bundled_repo_changed_without_its_instance_json(tmp_path: Path) -> None:
    from pytest_toolpolicy.bench import load_instances

    directory = make_bundled(tmp_path / "instances", "bundled__calc-1")
    (instance,) = load_instances(f"bundled:{tmp_path / 'instances'}").instances
    (directory / "repo/calc/ops.py").write_text(BASE["calc/ops.py"] + "# edited\n")
    with pytest.raises(WorkspaceSetupError, match="changed without its instance.json"):
        materialize(instance, tmp_path / "items")


def test_interpreter_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"TOOLPOLICY_PYTHON": f"acme/calc@2.0=sh, acme/calc={sys.executable}, true"}
    assert envs.choose_python("acme/calc", "1.0", environ=env) == sys.executable
    assert envs.choose_python("acme/calc", "2.0", environ=env).endswith("/sh")
    assert envs.choose_python("other/x", "1.0", environ=env).endswith("/true")
    assert envs.choose_python("other/x", "1.0", environ={}) == sys.executable


# Builds a real venv (a few seconds): TOOLPOLICY_SKIP_VENV=1 skips it.
@pytest.mark.skipif(os.environ.get("TOOLPOLICY_SKIP_VENV") == "1", reason="TOOLPOLICY_SKIP_VENV")
def test_venv_for_a_real_repo(tmp_path: Path, cache: Path) -> None:
    """A real venv from the current interpreter and a real ``pip install -e``, offline (the
    package builds with its own in-tree backend)."""
    repos, instance, _ = real(tmp_path, bare=False)
    checkout = cached_checkout(instance, repos=repos, cache_dir=cache)
    env = envs.ensure_env(
        "acme/calc", "1.0", checkout, cache_dir=cache, requirements=(), pip_args=("--no-index",)
    )
    assert env.repo_paths == (".",)
    assert env.pythonpath(tmp_path / "ws") == (str((tmp_path / "ws").resolve()),)
    again = envs.ensure_env("acme/calc", "1.0", checkout, cache_dir=cache, requirements=())
    assert again == env
    probe = subprocess.run(
        [env.python, "-c", "import calc; print(calc.div(6, 3))"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert probe.stdout.strip() == "2", probe.stderr


def test_venv_failure_is_an_infrastructure_error(tmp_path: Path, cache: Path) -> None:
    with pytest.raises(envs.EnvironmentSetupError, match="create the venv failed"):
        envs.ensure_env("acme/calc", "1.0", tmp_path, python="false", cache_dir=cache)
    pip = [sys.executable, "-m", "pip", "install", "--no-index", "no-such-package-xyz"]
    with pytest.raises(envs.EnvironmentSetupError, match=r"(?s)install x failed.*no-such-package"):
        envs._step("install x", pip, timeout=60)
