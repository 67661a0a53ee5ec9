from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_toolpolicy.bench import load_instances
from pytest_toolpolicy.bench.workspaces import materialize
from pytest_toolpolicy.models.sim.base_tree import directory_tree
from pytest_toolpolicy.models.sim.gold import _apply, file_edits

RESOLVABLE = [i for i in load_instances("bundled").instances if i.patch]


@pytest.mark.parametrize("scoped", [True, False], ids=["edit_entity", "edit_file"])
@pytest.mark.parametrize("instance", RESOLVABLE, ids=lambda i: i.instance_id)
def test_edits_reproduce_the_gold_patch(instance, scoped: bool, tmp_path: Path) -> None:
    repo = materialize(instance, tmp_path, name="base").root
    ours, gold = tmp_path / "ours", tmp_path / "gold"
    shutil.copytree(repo, ours, ignore=shutil.ignore_patterns(".git"))
    shutil.copytree(repo, gold, ignore=shutil.ignore_patterns(".git"))
    for edit in file_edits(directory_tree(repo).read, instance.patch, entity_scoped=scoped):
        assert not scoped or (len(edit.search) <= 400 and len(edit.replace) <= 2000)
        path = ours / edit.file
        path.write_text(_apply(path.read_text(), edit.file, edit))
    subprocess.run(["git", "apply", "-"], input=instance.patch.encode(), cwd=gold, check=True)
    assert subprocess.run(["diff", "-r", str(ours), str(gold)]).returncode == 0


def _apply_all(base: str, rel: str, edits) -> str:
    """Every edit through the lint gate ``edit_entity`` has: none may add an error."""
    from pytest_toolpolicy.primitives.lint import added_errors, lint_text

    text = base
    for edit in edits:
        after = _apply(text, edit.file, edit)
        assert not added_errors(lint_text(text, rel), lint_text(after, rel)), edit
        text = after
    return text


FILLER = "".join(f"\n\ndef filler_{n}(value):\n    return value + {n}\n" for n in range(30))


@pytest.mark.parametrize(
    ("base", "gold"),
    [
        (  # requests-2317: the import goes first in the patch, its last use after it
            "from os.path import join, basename\n" + FILLER + "\n\ndef use(p):\n"
            "    return basename(p)\n",
            "from os.path import join\n" + FILLER + "\n\ndef use(p):\n    return join(p)\n",
        ),
        (  # pytest-5840: the import goes, and then each of its uses
            "from os.path import join\n" + FILLER + "\n\ndef one(p):\n    return join(p, 'a')\n"
            "\n\ndef two(p):\n    q = join(p, 'b')\n    return q\n",
            FILLER.lstrip("\n") + "\n\ndef one(p):\n    return p + '/a'\n"
            "\n\ndef two(p):\n    q = p + '/b'\n    return q\n",
        ),
    ],
    ids=["use-changed-after-import", "uses-removed-after-import"],
)
def test_an_import_removed_before_its_uses_change_is_made_after_them(
    base: str, gold: str, tmp_path: Path
) -> None:
    """Real patches remove an import at the top before the uses far below it; made in that
    order, the first edit leaves an undefined name (the lint gate refuses it), and the module is
    too large for one edit holding both."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "mod.py").write_text(base)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    (tmp_path / "gold.py").write_text(gold)
    diff = subprocess.run(
        ["git", "diff", "--no-index", "mod.py", str(tmp_path / "gold.py")],
        cwd=repo, capture_output=True, text=True,
    ).stdout  # fmt: skip
    patch = re.sub(
        r"^(\+\+\+|---) .*$", lambda m: f"{m[1]} {'ab'[m[1] == '+++']}/mod.py", diff, flags=re.M
    )
    edits = file_edits(directory_tree(repo).read, patch, entity_scoped=True)
    assert edits[-1].selector == "mod"  # the import's edit, made last
    assert _apply_all(base, "mod.py", edits) == gold
