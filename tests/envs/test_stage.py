"""The environment stage (``envs/stage.py``) on real builds: each environment a run's instances
need, once, with a line as it starts and one as it ends; what could not be had kept as the
error the item meets, raised again for each of its items and graded as before."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from pytest_toolpolicy.bench.load import load_instances
from pytest_toolpolicy.envs import stage
from pytest_toolpolicy.envs.cache import environment_for
from pytest_toolpolicy.envs.environment import Environment
from pytest_toolpolicy.envs.spec import EnvironmentSetupError
from pytest_toolpolicy.envs.stage import Unavailable, resolve_environments
from pytest_toolpolicy.grading.grade import grade_patch
from pytest_toolpolicy.primitives.sandbox import Sandbox

from .runner_repo import INSTANCE, make_runner_repo

SANDBOX = Sandbox.from_env()


def test_each_environment_once_for_the_instances_that_share_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_runner_repo(tmp_path)
    repo.use(monkeypatch, tmp_path / "cache")
    first = repo.instance()
    second = dataclasses.replace(first, instance_id="acme__runner-2")
    bundled = load_instances("bundled", sample=1).instances[0]
    lines: list[str] = []
    resolved = resolve_environments(
        [first, bundled, second], repos=repo.mirrors, sandbox=SANDBOX, say=lines.append
    )
    what = rf"acme/runner 1\.0 @ {repo.base[:12]} \(2 instance\(s\)\)"
    assert len(lines) == 2 and re.fullmatch(rf"\[1/1\] {what} \.\.\.", lines[0]), lines
    assert re.fullmatch(rf"built   {what} [\d.]+s  acme__runner-1\.0-\w{{12}}", lines[1]), lines
    assert set(resolved) == {first.instance_id, second.instance_id}  # bundled: none needed
    env = resolved[first.instance_id]
    assert isinstance(env, Environment) and env.spec is not None
    assert env.spec.log_parser == "django" and resolved[second.instance_id] == env
    # What the instance's item built for itself before the stage, found now.
    assert environment_for(first, repos=repo.mirrors, sandbox=SANDBOX) == env


def test_bundled_instances_cost_the_stage_nothing() -> None:
    lines: list[str] = []
    instances = load_instances("bundled", sample=6).instances
    assert resolve_environments(instances, repos=None, sandbox=SANDBOX, say=lines.append) == {}
    assert lines == []


def test_an_environment_that_cannot_be_had_is_the_error_its_items_meet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_runner_repo(tmp_path, pre_install="echo no wheel today >&2; exit 3")
    repo.use(monkeypatch, tmp_path / "cache")
    instance = repo.instance()
    lines: list[str] = []
    resolved = resolve_environments(
        [instance], repos=repo.mirrors, sandbox=SANDBOX, say=lines.append
    )
    assert lines[1].startswith("failed  acme/runner 1.0 @ ") and "exit 3" in lines[1], lines
    gone = resolved[INSTANCE]
    assert isinstance(gone, Unavailable)
    said = rf"{INSTANCE}: environment acme__runner-1\.0-\w{{12}} failed to build: pre_install `"
    assert re.match(said, str(gone)) and "no wheel today" in str(gone)
    depths = []
    for _ in range(2):  # once for each of the instance's items
        with pytest.raises(EnvironmentSetupError) as raised:
            gone.raise_error()
        assert str(raised.value) == str(gone)
        depths.append(len(_frames(raised.value.__traceback__)))
    assert depths == [2, 2]  # this frame and raise_error's: none of an earlier raise
    graded = grade_patch(instance, instance.patch, sandbox=SANDBOX, env=gone, parent=tmp_path)
    assert (graded.status, graded.reason) == ("infra_error", str(gone))


def test_a_harness_fault_in_a_group_is_each_members_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    repo = make_runner_repo(tmp_path)
    instance = repo.instance()

    def fault(*args: object, **kwargs: object) -> None:
        raise OSError("no space left on device")

    monkeypatch.setattr(stage, "build_group", fault)
    lines: list[str] = []
    resolved = resolve_environments(
        [instance], repos=repo.mirrors, sandbox=SANDBOX, say=lines.append
    )
    assert lines[1].endswith("0.0s: OSError: no space left on device"), lines
    with pytest.raises(OSError, match="^no space left on device$"):
        resolved[INSTANCE].raise_error()  # type: ignore[union-attr]


def _frames(tb: object) -> list[object]:
    frames = []
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next  # type: ignore[attr-defined]
    return frames
