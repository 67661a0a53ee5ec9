"""``sim`` on real-format instances: no bundled directory (``path=None``), the repository served
as a git mirror and materialized at its base commit. The simulator plans from the workspace's
base commit, so ``sim:oracle`` resolves in both arms (issue 12, deliverable 6)."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from pytest_toolpolicy.bench.instance import Instance
from pytest_toolpolicy.envs.cache import Environment
from pytest_toolpolicy.models.sim import GoldError
from pytest_toolpolicy.models.sim.base_tree import workspace_tree
from pytest_toolpolicy.models.sim.plan import gold_edits
from pytest_toolpolicy.models.spec import build_model
from pytest_toolpolicy.primitives import Workspace
from pytest_toolpolicy.run import arms
from pytest_toolpolicy.run.pipeline import RunSetup, run_instance

from ..bench.gitmirrors import BASE, git, make_mirror, patches, real_instance

FIXED = BASE["calc/ops.py"].replace("a // b", "a / b")


# A real instance's environment, as an environment stage would hand it: this interpreter with
# the checkout on the path (building a venv is the business of ``tests/envs``): what is tested
# here is the simulator on the real materialization path.
ENV = Environment(sys.executable, (".",), plugin_autoload=False)


@pytest.fixture
def real(tmp_path: Path) -> tuple[Instance, Path]:
    """A real-format instance over a bare mirror, and the directory of mirrors."""
    mirror, base, _ = make_mirror(tmp_path / "mirrors" / "acme__calc", bare=True)
    scratch = tmp_path / "scratch"
    git(tmp_path, "clone", "-q", str(mirror), str(scratch))
    git(scratch, "checkout", "-q", base)
    instance = real_instance("acme/calc", base, *patches(scratch))
    assert instance.path is None
    return instance, mirror.parent


def _run(instance: Instance, arm: str, spec: str, repos: Path, workdir: Path):
    model = build_model(spec, instances={instance.instance_id: instance})
    return run_instance(instance, arm, model, workdir, setup=RunSetup(repos=repos), env=ENV)


@pytest.mark.parametrize("arm", arms.ARMS)
def test_oracle_resolves_a_real_instance(real, arm: str, tmp_path: Path) -> None:
    instance, repos = real
    result = _run(instance, arm, "sim:oracle", repos, tmp_path / "items")
    assert result.trajectory.outcome.outcome != "model_error", result.trajectory.outcome
    assert result.resolved, result.grade
    assert "+    return a / b" in result.trajectory.patch


@pytest.mark.parametrize("arm", arms.ARMS)
def test_the_default_profile_runs_a_real_instance_to_an_outcome(
    real, arm: str, tmp_path: Path
) -> None:
    instance, repos = real
    result = _run(instance, arm, "sim", repos, tmp_path / "items")
    assert result.trajectory.outcome.outcome != "model_error", result.trajectory.outcome
    assert result.grade is not None and result.grade.status in ("resolved", "unresolved")


def test_a_gold_patch_the_base_lacks_is_a_model_error_naming_instance_and_file(
    real, tmp_path: Path
) -> None:
    instance, repos = real
    patch = instance.patch.replace("calc/ops.py", "calc/gone.py")
    broken = dataclasses.replace(instance, patch=patch)
    result = _run(broken, "policy", "sim:oracle", repos, tmp_path / "items")
    outcome = result.trajectory.outcome
    assert outcome.outcome == "model_error"
    reason = str(outcome.detail.get("reason"))
    assert f"sim cannot plan instance {instance.instance_id}" in reason
    assert "calc/gone.py is not in the base commit" in reason


def test_the_plan_reads_the_base_commit_not_the_changed_working_tree(tmp_path: Path) -> None:
    """An agent's edits change the working tree mid-run; the plan, cached by commit, does not
    move (and is the same when computed afresh from the edited tree's workspace)."""
    mirror, base, _ = make_mirror(tmp_path / "calc")
    scratch = tmp_path / "scratch"
    git(tmp_path, "clone", "-q", str(mirror), str(scratch))
    git(scratch, "checkout", "-q", base)
    gold, _ = patches(scratch)
    workspace = Workspace(scratch)
    tree = workspace_tree(workspace)
    gold_edits.cache_clear()
    before = gold_edits(tree, gold, True)
    (scratch / "calc/ops.py").write_text(FIXED)  # as if the agent had already fixed it
    assert gold_edits(workspace_tree(Workspace(scratch, base)), gold, True) == before
    assert gold_edits.cache_info().hits == 1
    gold_edits.cache_clear()
    assert gold_edits(workspace_tree(workspace), gold, True) == before  # read afresh: the same
    assert [(e.file, e.selector) for e in before] == [("calc/ops.py", "calc.ops.div")]
    with pytest.raises(GoldError, match="changes no file"):
        gold_edits(tree, "", True)
