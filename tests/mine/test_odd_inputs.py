"""What a repository to mine can hold that a miner must not trip on: a file named like an
option, a path with a newline, a commit message of megabytes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pytest_toolpolicy.envs.environment import Environment
from pytest_toolpolicy.mine import history
from pytest_toolpolicy.mine.mine import Setup, mine_change
from pytest_toolpolicy.primitives.sandbox import Sandbox

from ..bench.gitmirrors import BASE, FIXED_OPS, git, write

SANDBOX = Sandbox.from_env()
ENV = Environment(sys.executable, (".",), plugin_autoload=False)
MESSAGE = "Make div return a true quotient: div(1, 2) returned 0 and now returns 0.5\n"
TEST = "from calc import div\n\n\ndef test_div_float():\n    assert div(1, 2) == 0.5\n"


def repo_with(tmp_path: Path, test_path: str, message: str = MESSAGE) -> tuple[Path, str]:
    root = tmp_path / "acme__calc"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, BASE)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    write(root, {"calc/ops.py": FIXED_OPS})
    (root / test_path).write_text(TEST)
    git(root, "add", "-A")
    subprocess.run(
        ["git", "commit", "-q", "-F", "-"], cwd=root, input=message.encode(), check=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GIT_AUTHOR_NAME": "t",
             "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"},
    )  # fmt: skip
    return root, git(root, "rev-parse", "HEAD")


def test_a_test_file_named_like_an_option_is_run_as_a_file(tmp_path: Path) -> None:
    root, head = repo_with(tmp_path, "--output=ops_test.py")
    mined = mine_change(root, head, Setup("acme/calc", tmp_path, SANDBOX, env=ENV))
    assert mined.row is not None, mined
    assert mined.row["FAIL_TO_PASS"] == ["--output=ops_test.py::test_div_float"]


def test_a_path_with_a_newline_is_refused_saying_why(tmp_path: Path) -> None:
    root, head = repo_with(tmp_path, "odd\nname_test.py")
    mined = mine_change(root, head, Setup("acme/calc", tmp_path, SANDBOX, env=ENV))
    assert mined.row is None and mined.kind == "candidate"
    assert mined.skipped == (
        "a path with a control character ('odd\\nname_test.py'): no test runner can be told it"
        " as one argument it reads the same way"
    )


def test_a_huge_message_is_not_read_and_a_long_one_is_cut(tmp_path: Path) -> None:
    root, head = repo_with(tmp_path, "ops_test.py", MESSAGE + "x" * (history.MAX_COMMIT_BYTES + 1))
    mined = mine_change(root, head, Setup("acme/calc", tmp_path, SANDBOX, run=False))
    assert mined.row is None and "MiB (its message; more than 4 MiB): not read" in str(
        mined.skipped
    )
    other = tmp_path / "other"
    other.mkdir()
    long_message = MESSAGE + ("word " * 40_000)
    root, head = repo_with(other, "ops_test.py", long_message)
    mined = mine_change(root, head, Setup("acme/calc", other, SANDBOX, run=False))
    assert mined.row is not None
    statement = mined.row["problem_statement"]
    assert statement.startswith("Make div return") and len(statement) <= 50_100
