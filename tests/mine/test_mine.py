"""Mining one change into an instance, its lists derived by running its tests in the sandbox
(``mine.mine_change``), and the instance validated as any SWE-bench row is."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_toolpolicy.bench.instance import instance_from_row
from pytest_toolpolicy.envs.environment import Environment
from pytest_toolpolicy.grading.grade import grade_patch
from pytest_toolpolicy.mine.mine import Setup, mine_change
from pytest_toolpolicy.primitives.sandbox import Sandbox

from .history_repo import History, make_history

SANDBOX = Sandbox.from_env()
ENV = Environment(sys.executable, (".",), plugin_autoload=False)


def based(root: Path, files: dict[str, str]) -> Path:
    """A new repository at ``root`` whose one commit holds ``files``."""
    from ..bench.gitmirrors import git, write

    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, files)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> History:
    return make_history(tmp_path_factory.mktemp("mine") / "acme__calc")


def setup(repo: History, **kw: object) -> Setup:
    return Setup("acme/calc", repo.root.parent, SANDBOX, env=ENV, **kw)  # type: ignore[arg-type]


def test_a_fix_and_its_test_become_an_instance_that_validates(repo: History) -> None:
    mined = mine_change(repo.root, repo.fix, setup(repo))
    assert mined.skipped is None and mined.row is not None, mined
    row = mined.row
    assert row["instance_id"] == f"acme__calc-{repo.fix[:12]}"
    assert (row["base_commit"], row["mined_from"]) == (repo.docs, repo.fix)
    # The project declares 1.0 (its nearest tag, v1.2.0, says otherwise): built at its base.
    assert (row["version"], row["environment_setup_commit"]) == ("1.0", repo.docs)
    assert row["FAIL_TO_PASS"] == ["tests/test_ops.py::test_div_float"]
    assert row["PASS_TO_PASS"] == [
        "tests/test_ops.py::TestDiv::test_exact[6-3-2]",
        "tests/test_ops.py::TestDiv::test_exact[9-3-3]",
        "tests/test_ops.py::test_add",
    ]
    assert row["statement_source"] == "commit message" and row["issue_numbers"] == ["12"]
    assert row["flaky"] == [] and not row["merge"]
    instance = instance_from_row(row, "local")
    gold = grade_patch(instance, instance.patch, sandbox=SANDBOX, env=ENV, repos=repo.root.parent)
    empty = grade_patch(instance, "", sandbox=SANDBOX, env=ENV, repos=repo.root.parent)
    assert (gold.status, empty.status) == ("resolved", "unresolved")


def test_a_merged_pull_request_whose_test_does_not_collect_before(repo: History) -> None:
    mined = mine_change(repo.root, repo.merge, setup(repo))
    assert mined.row is not None, mined
    assert mined.row["FAIL_TO_PASS"] == ["tests/test_square.py::test_square"]
    assert mined.row["PASS_TO_PASS"] == [] and mined.row["merge"]
    assert mined.row["problem_statement"].startswith("Add square, which the geometry module")
    assert mined.row["statement_source"] == "merge body"


@pytest.mark.parametrize(
    ("which", "kind", "why"),
    [
        ("docs", "candidate", "touches no test file"),
        ("tests_only", "candidate", "touches test files only"),
        ("thin", "statement", "statement too thin to act on (1 words)"),
    ],
)
def test_what_is_dropped_says_why(repo: History, which: str, kind: str, why: str) -> None:
    mined = mine_change(repo.root, getattr(repo, which), setup(repo))
    assert (mined.row, mined.kind, mined.skipped) == (None, kind, why)


def test_a_thin_message_with_a_supplied_statement(repo: History) -> None:
    supplied = {repo.thin[:10]: "neg is missing: calc has no way to negate a number"}
    mined = mine_change(repo.root, repo.thin, setup(repo, supplied=supplied))
    assert mined.row is not None and mined.row["statement_source"] == "user file"
    assert mined.row["FAIL_TO_PASS"] == ["tests/test_neg.py::test_neg"]


def test_a_change_whose_test_fails_either_way_is_dropped(tmp_path: Path) -> None:
    from ..bench.gitmirrors import BASE, git, write

    root = based(tmp_path / "acme__calc", BASE)
    write(root, {"calc/extra.py": "X = 1\n", "tests/test_x.py": "def test_x():\n    assert 0\n"})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "Add a constant that the tests check, and its own test")
    head = git(root, "rev-parse", "HEAD")
    mined = mine_change(root, head, Setup("acme/calc", tmp_path, SANDBOX, env=ENV))
    assert (mined.kind, mined.skipped) == (
        "lists",
        "no test fails before the patch and passes after it",
    )


def test_candidates_only(repo: History) -> None:
    mined = mine_change(repo.root, repo.fix, setup(repo, run=False))
    assert mined.row is not None and mined.row["FAIL_TO_PASS"] == []
    assert mined.row["test_patch"].startswith("diff --git a/tests/test_ops.py")


# sympy's bin/test in miniature (its runner's library, whose reporter grading wraps): each test
# function of the files it is given, "test_name ok" / "test_name F" with --verbose, the format
# SWE-bench's sympy parser reads; a file that does not import reports no test.
def sympy_like_runner() -> dict[str, str]:
    from ..grading.sympy_like import runner_files

    return {**runner_files(), "sympy/__init__.py": "from .utilities.runtests import test\n"}


def test_a_repository_whose_own_runner_reports_its_tests(tmp_path: Path) -> None:
    from pytest_toolpolicy.envs.spec import EnvSpec

    from ..bench.gitmirrors import BASE, FIXED_OPS, NEW_TEST, git, write

    root = based(tmp_path / "acme__calc", {**BASE, **sympy_like_runner()})
    test_file = (root / "tests/test_ops.py").read_text() + NEW_TEST
    write(root, {"calc/ops.py": FIXED_OPS, "tests/test_ops.py": test_file})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "Make div return a true quotient: div(1, 2) returned 0")
    spec = EnvSpec("acme/calc", "1.2", test_cmd="python bin/test --verbose", log_parser="sympy")
    env = Environment(sys.executable, (".",), plugin_autoload=False, spec=spec)
    head = git(root, "rev-parse", "HEAD")
    mined = mine_change(root, head, Setup("acme/calc", tmp_path, SANDBOX, env=env))
    assert mined.row is not None, mined
    assert mined.row["FAIL_TO_PASS"] == ["test_div_float"]
    # the runner's own names, as SWE-bench's sympy rows list them (the miniature runs only
    # module-level functions: TestDiv's method is not among them)
    assert mined.row["PASS_TO_PASS"] == ["test_add"]


def test_a_runner_without_a_test_command_says_so(tmp_path: Path) -> None:
    from pytest_toolpolicy.envs.spec import EnvSpec
    from pytest_toolpolicy.mine.lists import SideFailed, run_side

    env = Environment(
        sys.executable, spec=EnvSpec("acme/calc", "1.2", test_cmd="", log_parser="sympy")
    )
    with pytest.raises(SideFailed, match="sympy's runner needs its spec's test command"):
        run_side(tmp_path, ["t.py"], parser="sympy", sandbox=SANDBOX, env=env, timeout=30,
                 touched=())  # fmt: skip


def test_the_shipped_example_mines_as_its_readme_says(tmp_path: Path) -> None:
    from pytest_toolpolicy.mine import history
    from pytest_toolpolicy.mine.example_history import unpack_example

    mirror = unpack_example(tmp_path)
    walk = history.commits(mirror, "HEAD")
    mined = [
        mine_change(mirror, c, Setup("example/tally", tmp_path, SANDBOX, env=ENV)) for c in walk
    ]
    kept = {m.row["problem_statement"].splitlines()[0]: m.row for m in mined if m.row}
    assert {k: r["FAIL_TO_PASS"] for k, r in kept.items()} == {
        "Accept days in durations": ["tests/test_units.py::test_days"],
        "Add percent(part, whole, digits) for the progress lines of reports: a share": [
            "tests/test_percent.py::test_percent",
            "tests/test_percent.py::test_percent_digits",
            "tests/test_percent.py::test_percent_of_nothing",
        ],
        "parse_duration reads only the first unit of a compound duration": [
            "tests/test_units.py::test_compound[1h30m-5400]",
            "tests/test_units.py::test_compound[2m5s-125]",
            "tests/test_units.py::test_trailing_garbage_is_refused",
        ],
        "Fix slugify leaving a dash at the end of a title": [
            "tests/test_text.py::test_slugify_drops_trailing_punctuation"
        ],
    }
    assert {r["version"] for r in kept.values()} == {"0.1", "0.2"}
    dropped = sorted((m.kind, m.skipped) for m in mined if m.row is None)
    assert dropped == [
        ("candidate", "touches no test file"),
        ("candidate", "touches no test file"),
        ("candidate", "touches test files only"),
        ("lists", "no test fails before the patch and passes after it"),
        ("statement", "statement too thin to act on (1 words)"),
    ]


def test_a_data_file_the_test_patch_touches_is_not_named_to_pytest(tmp_path: Path) -> None:
    """sphinx's test patches touch files under tests/roots/ (a .po catalogue): named to pytest,
    such a file fails the whole run ("not found"); its tests run it."""
    from ..bench.gitmirrors import BASE, FIXED_OPS, NEW_TEST, git, write

    root = based(tmp_path / "acme__calc", BASE)
    test_file = (root / "tests/test_ops.py").read_text() + NEW_TEST
    write(root, {"calc/ops.py": FIXED_OPS, "tests/test_ops.py": test_file,
                 "tests/roots/halves.po": 'msgid "half"\n'})  # fmt: skip
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "Make div return a true quotient: div(1, 2) returned 0")
    mined = mine_change(
        root, git(root, "rev-parse", "HEAD"), Setup("acme/calc", tmp_path, SANDBOX, env=ENV)
    )
    assert mined.row is not None, mined
    assert "tests/roots/halves.po" in mined.row["test_patch"]
    assert mined.row["FAIL_TO_PASS"] == ["tests/test_ops.py::test_div_float"]


def test_a_checkout_that_cannot_be_made_drops_the_change_and_the_walk_goes_on(
    repo: History, tmp_path: Path
) -> None:
    """astropy's mirror lacks a file over the snapshot service's size limit: the environment's
    checkout fails for the changes after it, each dropped with why, never the walk."""
    lacking = tmp_path / "repos"
    lacking.mkdir()  # no acme__calc here: the environment's checkout cannot be made
    mined = mine_change(repo.root, repo.fix, Setup("acme/calc", lacking, SANDBOX))
    assert mined.row is None and mined.kind == "environment"
    assert mined.skipped is not None and mined.skipped.startswith("environment: ")
