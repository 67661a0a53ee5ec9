"""Walking a repository's first-parent history and splitting each change (``history.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_toolpolicy.mine import history

from .history_repo import History, make_history


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> History:
    return make_history(tmp_path_factory.mktemp("mine") / "acme__calc")


def test_the_walk_is_first_parent_newest_first(repo: History) -> None:
    walk = history.commits(repo.root)
    assert walk == [repo.merge, repo.thin, repo.tests_only, repo.fix, repo.docs]  # not the root
    assert history.commits(repo.root, f"{repo.fix}^..{repo.fix}") == [repo.fix]
    assert history.commits(repo.root, limit=2) == [repo.merge, repo.thin]
    assert history.commits(repo.root, paths=["README.md"]) == [repo.docs]


def test_a_revision_that_is_an_option_is_refused(repo: History) -> None:
    with pytest.raises(history.MineError, match="not a revision"):
        history.commits(repo.root, "--all")
    with pytest.raises(history.MineError, match="git rev-list failed"):
        history.commits(repo.root, "no-such-branch")


def test_candidates_touch_tests_and_code(repo: History) -> None:
    reasons = {
        c: history.candidate_reason(history.change(repo.root, c))
        for c in history.commits(repo.root)
    }
    assert reasons == {
        repo.merge: None,
        repo.thin: None,
        repo.tests_only: "touches test files only",
        repo.fix: None,
        repo.docs: "touches no test file",
    }


def test_a_merge_is_its_whole_first_parent_diff(repo: History) -> None:
    change = history.change(repo.root, repo.merge)
    assert change.merge and change.parent == repo.thin
    assert change.files == ("calc/ops.py", "tests/test_square.py")
    assert change.message.startswith("Merge pull request #5 from ann/feature")


def test_a_merge_carries_its_branchs_messages(repo: History) -> None:
    assert history.change(repo.root, repo.merge).branch == ("square", "test square")
    assert history.change(repo.root, repo.fix).branch == ()


def test_the_patch_and_the_test_patch(repo: History) -> None:
    change = history.change(repo.root, repo.fix)
    assert (change.code, change.tests) == (("calc/ops.py",), ("tests/test_ops.py",))
    patch, test_patch = history.patches(repo.root, change)
    assert patch.startswith("diff --git a/calc/ops.py b/calc/ops.py")
    assert "tests/" not in patch and "-    return a // b" in patch
    assert test_patch.startswith("diff --git a/tests/test_ops.py b/tests/test_ops.py")
    assert "+def test_div_float():" in test_patch and "calc/ops.py" not in test_patch


def test_a_change_with_a_huge_file_is_dropped_unread(repo: History, tmp_path: Path) -> None:
    from ..bench.gitmirrors import git

    assert history.change(repo.root, repo.fix).largest < 1000
    root = tmp_path / "acme__big"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "a.py").write_text("x = 1\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    (root / "data.py").write_text("# padding\n" * 120_000)  # 1.2 MB of "code"
    (root / "tests").mkdir()
    (root / "tests/test_a.py").write_text("def test_a():\n    pass\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "Add a generated table and its test")
    change = history.change(root, git(root, "rev-parse", "HEAD"))
    assert change.largest == 1_200_000
    assert history.candidate_reason(change) == (
        "touches a file of 1.1 MiB (more than 1 MiB): no diff of it is read"
    )


def test_too_many_files() -> None:
    files = tuple(f"pkg/m{i}.py" for i in range(15)) + ("tests/test_m.py",)
    change = history.Change("c", "p", "2024-01-01T00:00:00+00:00", "m", files, False)
    assert history.candidate_reason(change) == "touches 16 files (more than 15)"


def test_the_version_the_project_declares_comes_before_the_nearest_tag(
    repo: History, tmp_path: Path
) -> None:
    """The history's pyproject.toml says 1.0 while its nearest tag is v1.2.0 (a tag on another
    line, as seaborn's are): the project's word wins, built at the commit itself."""
    assert history.version(repo.root, repo.fix) == ("1.0", repo.fix)
    assert [history.major_minor(t) for t in ("v7.2.1", "3.0", "release-2", "1.10.0rc1", "sympy-1.5")] == [
        "7.2", "3.0", None, "1.10", "1.5",
    ]  # fmt: skip


def test_a_computed_version_is_the_nearest_tag_s(tmp_path: Path) -> None:
    """setuptools_scm and versioneer derive the version from the tag: so does the miner."""
    from ..bench.gitmirrors import git, write

    git(tmp_path, "init", "-q", "-b", "main")
    write(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "lib"\ndynamic = ["version"]\n',
            "lib/__init__.py": "from ._version import version as __version__\n",
        },
    )
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "a")
    tagged = git(tmp_path, "rev-parse", "HEAD")
    git(tmp_path, "tag", "v2.4.1")
    git(tmp_path, "commit", "-q", "--allow-empty", "-m", "b")
    head = git(tmp_path, "rev-parse", "HEAD")
    assert history.version(tmp_path, head) == ("2.4", tagged)
    write(tmp_path, {"lib/__init__.py": "__version__ = '2.4.2.dev0'\n"})
    git(tmp_path, "commit", "-qam", "c")
    head = git(tmp_path, "rev-parse", "HEAD")
    assert history.version(tmp_path, head) == ("2.4", tagged)  # declared, and the tag agrees


def test_no_tag_is_version_0_0_at_the_commit_itself(tmp_path: Path) -> None:
    from ..bench.gitmirrors import git

    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "a.py").write_text("x = 1\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "a")
    head = git(tmp_path, "rev-parse", "HEAD")
    assert history.version(tmp_path, head) == ("0.0", head)
