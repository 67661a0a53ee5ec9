from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_toolpolicy.bench import load_instances
from pytest_toolpolicy.bench.workspaces import materialize
from pytest_toolpolicy.models.sim.base_tree import directory_tree
from pytest_toolpolicy.models.sim.gold import GoldError, file_edits
from pytest_toolpolicy.models.sim.gold import apply_edit as _apply

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
    repo, patch = _patch_of(tmp_path, base, gold)
    edits = file_edits(directory_tree(repo).read, patch, entity_scoped=True)
    assert edits[-1].selector == "mod"  # the import's edit, made last
    assert _apply_all(base, "mod.py", edits) == gold


def _patch_of(tmp_path: Path, base: str, gold: str) -> tuple[Path, str]:
    """A repository holding ``base`` as mod.py, and the unified diff that makes it ``gold``."""
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
    return repo, patch


def _body(name: str, n: int) -> str:
    """A nested helper and ``n`` statements using a local and ``Path``: well over 400 chars."""
    steps = "".join(f"        d['k{i}'] = str(Path(str(d.get('k{i}', {i}))))\n" for i in range(n))
    return (
        f"    def {name}(self):\n"
        "        def helper(rep):\n"
        "            out = dict(rep.__dict__)\n"
        "            for key, value in list(out.items()):\n"
        "                if hasattr(value, '__dict__'):\n"
        "                    out[key] = dict(value.__dict__)\n"
        "            return out\n\n"
        "        d = helper(self)\n" + steps + "        return d\n"
    )


def test_a_run_larger_than_the_caps_is_made_in_lint_clean_steps(tmp_path: Path) -> None:
    """pytest-5787's shape: a method body of 1,000+ chars (search cap 400) moves into a new
    module-level function of 2,000+ chars (replace cap 2000); deleting it piece by piece leaves
    the ``Path`` import unused for a while, which a ``# noqa`` mark carries until the new
    function uses it again."""
    head = "from pathlib import Path\n\n\nclass Report:\n"
    base = head + _body("to_json", 14) + FILLER
    new = _body("to_json", 40).replace("    def to_json(self):", "def report_to_json(self):")
    new = "\n".join(line[4:] if line.startswith("    ") else line for line in new.split("\n"))
    gold = head + "    def to_json(self):\n        return report_to_json(self)\n" + FILLER
    gold += "\n\n" + new
    repo, patch = _patch_of(tmp_path, base, gold)
    edits = file_edits(directory_tree(repo).read, patch, entity_scoped=True)
    assert all(len(e.search) <= 400 and len(e.replace) <= 2000 for e in edits)
    assert len(edits) > 3
    assert _apply_all(base, "mod.py", edits) == gold
    assert not any("noqa" in e.replace for e in edits[-1:])


def test_a_run_inside_a_docstring_larger_than_the_caps(tmp_path: Path) -> None:
    """sympy-20154's shape: 15 lines of a long docstring rewritten, no statement among them:
    removed a run of lines at a time, each deletion leaving the module parsing."""
    para = "".join(
        f"    Line {n} of the old explanation, long enough to count.\n" for n in range(15)
    )
    doc = '    """Partitions.\n\n' + para + '\n    Examples\n    ========\n    """\n'
    base = "def partitions(n):\n" + doc + "    return [n]\n" + FILLER
    new = "".join(f"    Line {n} of the new text, which says something else.\n" for n in range(12))
    gold = base.replace(para, new)
    repo, patch = _patch_of(tmp_path, base, gold)
    edits = file_edits(directory_tree(repo).read, patch, entity_scoped=True)
    assert all(len(e.search) <= 400 and len(e.replace) <= 2000 for e in edits)
    assert len(edits) > 1
    assert _apply_all(base, "mod.py", edits) == gold


NEW_FILES = """\
diff --git a/changelog/12.bugfix.rst b/changelog/12.bugfix.rst
new file mode 100644
--- /dev/null
+++ b/changelog/12.bugfix.rst
@@ -0,0 +1 @@
+Fixed ``div``.
diff --git a/calc.py b/calc.py
--- a/calc.py
+++ b/calc.py
@@ -1,2 +1,2 @@
 def div(a, b):
-    return a // b
+    return a / b
"""


def test_a_new_file_that_is_not_code_is_left_out_and_a_new_module_is_not(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text("def div(a, b):\n    return a // b\n")
    for scoped in (True, False):
        edits = file_edits(directory_tree(tmp_path).read, NEW_FILES, entity_scoped=scoped)
        assert [e.file for e in edits] == ["calc.py"]  # the changelog entry changes no test
    module = NEW_FILES.replace("changelog/12.bugfix.rst", "calc_extra.py")
    # the baseline's write_file makes the new module whole, before the edit of calc.py
    edits = file_edits(directory_tree(tmp_path).read, module, entity_scoped=False)
    assert [(e.file, e.search, e.replace) for e in edits][0] == (
        "calc_extra.py", "", "Fixed ``div``.\n"
    )  # fmt: skip
    # none of the policy's tools creates a file: its plan is declined, saying so
    with pytest.raises(GoldError, match="adds calc_extra.py: edit_entity edits entities of files"):
        file_edits(directory_tree(tmp_path).read, module, entity_scoped=True)


def test_the_policy_arm_leaves_out_changes_to_files_that_are_not_code(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text("def div(a, b):\n    return a // b\n")
    (tmp_path / "AUTHORS").write_text("Ann\n")
    authors = (
        "diff --git a/AUTHORS b/AUTHORS\n--- a/AUTHORS\n+++ b/AUTHORS\n@@ -1 +1,2 @@\n Ann\n+Bob\n"
    )
    patch = authors + "diff --git a/calc.py" + NEW_FILES.split("diff --git a/calc.py", 1)[1]
    scoped = file_edits(directory_tree(tmp_path).read, patch, entity_scoped=True)
    assert [e.file for e in scoped] == ["calc.py"]  # edit_entity edits Python entities only
    alone = file_edits(directory_tree(tmp_path).read, authors, entity_scoped=False)
    assert [e.file for e in alone] == ["AUTHORS"]  # the current arm writes whole files
