from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_toolpolicy.bench import load_instances
from pytest_toolpolicy.models.sim.gold import _apply, file_edits

RESOLVABLE = [i for i in load_instances("bundled").instances if i.patch]


@pytest.mark.parametrize("scoped", [True, False], ids=["edit_entity", "edit_file"])
@pytest.mark.parametrize("instance", RESOLVABLE, ids=lambda i: i.instance_id)
def test_edits_reproduce_the_gold_patch(instance, scoped: bool, tmp_path: Path) -> None:
    repo = Path(instance.path) / "repo"
    ours, gold = tmp_path / "ours", tmp_path / "gold"
    shutil.copytree(repo, ours)
    shutil.copytree(repo, gold)
    for edit in file_edits(repo, instance.patch, entity_scoped=scoped):
        assert not scoped or (len(edit.search) <= 400 and len(edit.replace) <= 2000)
        path = ours / edit.file
        path.write_text(_apply(path.read_text(), edit.file, edit))
    subprocess.run(["git", "apply", "-"], input=instance.patch.encode(), cwd=gold, check=True)
    assert subprocess.run(["diff", "-r", str(ours), str(gold)]).returncode == 0
