"""What an ancestry-only checkout costs against the full clone it replaced, side by side in one
run: building the cached checkout of a commit once (cold), and the item's workspace made from
it each time after (the second item of a cached commit; target: as fast as before).

The full clone is how checkouts were made before (``git clone --no-checkout MIRROR`` and a
checkout: it holds every later commit, the fix among them); the ancestry-only one is what
``bench/workspaces.py`` builds now. Both go through ``hostgit``; runs are interleaved.

    .venv/bin/python benchmarks/bench_workspace_history.py [--mirror DIR --commit SHA] [--runs 9]

Without ``--mirror``, a synthetic history of 3,000 commits (a real mirror, e.g. a local clone of
pallets/flask at pallets__flask-5014's base 7ee9ceb7, is the fairer input).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pytest_toolpolicy.bench.instance import Instance
from pytest_toolpolicy.bench.workspaces import cached_checkout
from pytest_toolpolicy.primitives import hostgit


def git(args: list[str], cwd: Path, stdin: str | None = None) -> str:
    return hostgit.run(args, cwd=cwd, error=RuntimeError, stdin=stdin).text


def synthetic(root: Path, commits: int) -> tuple[Path, str]:
    """A mirror with ``commits`` commits on main; returns (mirror, the middle commit)."""
    mirror = root / "mirrors" / "acme__lib"
    mirror.mkdir(parents=True)
    git(["init", "-q", "-b", "main"], mirror)
    lines = ["blob", "mark :1", "data 2", "x", ""]
    for n in range(commits):
        lines += ["commit refs/heads/main", f"mark :{n + 2}", "committer t <t@t> 0 +0000"]
        lines += ["data 1", "c", f"M 100644 :1 f{n % 50}.txt", ""]
    git(["fast-import", "--quiet"], mirror, stdin="\n".join(lines) + "\n")
    middle = git(["rev-parse", f"main~{commits // 2}"], mirror).strip()
    git(["checkout", "-q", "main"], mirror)
    return mirror, middle


def full_clone(mirror: Path, commit: str, into: Path) -> Path:
    git(["clone", "-q", "--no-checkout", str(mirror), str(into)], into.parent)
    git(["checkout", "-q", "--detach", commit], into)
    return into


def item(checkout: Path, commit: str, into: Path) -> None:
    git(["clone", "-q", "--shared", "--no-checkout", str(checkout), str(into)], into.parent)
    git(["checkout", "-q", "--detach", commit], into)


def commits_in(workspace: Path) -> int:
    """The commit objects a process in the workspace can read (what an agent would list)."""
    listing = git(["cat-file", "--batch-all-objects", "--batch-check"], workspace)
    return sum(line.split()[1] == "commit" for line in listing.splitlines())


def timed(step: Callable[[], object]) -> float:
    start = time.perf_counter()
    step()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mirror", type=Path, help="a local mirror (default: a synthetic one)")
    parser.add_argument("--commit", help="the commit to check out (with --mirror)")
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-history-") as tmp:
        root = Path(tmp)
        if args.mirror:
            mirror, commit = args.mirror.resolve(), args.commit
            repo = "acme/lib"
            (root / "mirrors").mkdir()
            (root / "mirrors" / "acme__lib").symlink_to(mirror)
        else:
            mirror, commit = synthetic(root, 3000)
            repo = "acme/lib"
        instance = Instance(
            instance_id="acme__lib-1", repo=repo, base_commit=commit, problem_statement="x",
            patch="", test_patch="", FAIL_TO_PASS=(), PASS_TO_PASS=(), version="1", source="local",
        )  # fmt: skip
        cold_full = timed(lambda: full_clone(mirror, commit, root / "full"))
        cold_past: list[Path] = []
        cold_new = timed(
            lambda: cold_past.append(
                cached_checkout(instance, repos=root / "mirrors", cache_dir=root / "cache")
            )
        )
        past = cold_past[0]
        before, after = [], []
        for run in range(args.runs):
            old_item, new_item = root / f"old-{run}", root / f"new-{run}"
            before.append(timed(lambda: item(root / "full", commit, old_item)))  # noqa: B023
            after.append(timed(lambda: item(past, commit, new_item)))  # noqa: B023
        count = int(git(["rev-list", "--count", commit], past).strip())
        seen_full = commits_in(root / "old-0")
        print(f"mirror: {mirror} at {commit[:12]} ({count} commits in its past)")
        seen_now = commits_in(root / "new-0")
        print(f"commits a workspace can read: full clone {seen_full}, ancestry-only {seen_now}")
        print(f"cold checkout: full clone {cold_full:.3f} s, ancestry-only {cold_new:.3f} s")
        old, new = statistics.median(before), statistics.median(after)
        print(
            f"second item of a cached commit (median of {args.runs}): before {old * 1000:.1f} ms,"
            f" now {new * 1000:.1f} ms, ratio {new / old:.2f}x"
        )


if __name__ == "__main__":
    main()
