"""A small repository with a history to mine: a tag, a fix with its test, and each kind of
change the miner drops."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..bench.gitmirrors import BASE, FIXED_OPS, NEW_TEST, git, write

FIX_MESSAGE = (
    "Make div return a true quotient\n\n"
    "div(1, 2) returned 0 because it used floor division; it now returns 0.5 as the\n"
    "documentation says.\n\nFixes #12\nSigned-off-by: Ann Example <ann@example.org>\n"
)


@dataclass(frozen=True)
class History:
    root: Path
    initial: str
    docs: str  # README only
    fix: str  # code and its test
    tests_only: str
    thin: str  # code and test, message "fix"
    merge: str  # a merged pull request: code and test on a branch


def make_history(root: Path) -> History:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    write(root, BASE)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "Initial calculator")
    git(root, "tag", "v1.2.0")
    initial = git(root, "rev-parse", "HEAD")

    def commit(files: dict[str, str], message: str) -> str:
        write(root, files)
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", message)
        return git(root, "rev-parse", "HEAD")

    docs = commit({"README.md": "calc\n"}, "Document the calculator for new users in a readme")
    test_file = (root / "tests/test_ops.py").read_text() + NEW_TEST
    fix = commit({"calc/ops.py": FIXED_OPS, "tests/test_ops.py": test_file}, FIX_MESSAGE)
    more = test_file + "\n\ndef test_add_zero():\n    assert add(0, 0) == 0\n"
    tests_only = commit({"tests/test_ops.py": more}, "Cover adding zero, which nobody had tested")
    ops = FIXED_OPS + "\n\ndef neg(a):\n    return -a\n"
    thin = commit(
        {"calc/ops.py": ops, "tests/test_neg.py": "from calc.ops import neg\n\n\ndef test_neg():\n    assert neg(1) == -1\n"},
        "fix",
    )  # fmt: skip
    git(root, "checkout", "-q", "-b", "feature")
    ops += "\n\ndef square(a):\n    return a * a\n"
    commit({"calc/ops.py": ops}, "square")
    commit(
        {"tests/test_square.py": "from calc.ops import square\n\n\ndef test_square():\n    assert square(3) == 9\n"},
        "test square",
    )  # fmt: skip
    git(root, "checkout", "-q", "main")
    git(
        root, "merge", "-q", "--no-ff", "feature", "-m",
        "Merge pull request #5 from ann/feature\n\nAdd square, which the geometry module "
        "needs for areas of squares",
    )  # fmt: skip
    merge = git(root, "rev-parse", "HEAD")
    return History(root, initial, docs, fix, tests_only, thin, merge)
