"""``toolpolicy mine REPO --out FILE.jsonl``: a repository's history as instances.

Each instance is appended to ``FILE.jsonl`` as it is mined, and each change that is dropped to
``FILE.skipped.jsonl`` with why (``mine/output.py``): a walk that stops loses nothing, and run
again it starts where it left off (``--fresh`` starts over). A line per change says how it
went; the end prints what was kept and, per kind, what was dropped.

``--sample N`` mines a seeded sample of the walk's candidate changes (a long history's yield
measured without running every change); the candidate check is cheap, so it runs on the whole
walk first. ``--example DIR`` unpacks the history this package ships as the mirror
``DIR/example__tally`` (``mine/example_history.py``), to mine as any repository.
"""

from __future__ import annotations

import argparse
import re
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from .errors import UsageError

_NAME = re.compile(r"^([A-Za-z0-9][\w.-]*)__([A-Za-z0-9][\w.-]*?)(?:\.git)?$")
_REPO = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")


def add_parser(sub: Any) -> None:
    mine = sub.add_parser(
        "mine", help="mine a repository's history into instances (SWE-bench's schema)"
    )
    mine.add_argument("repo", type=Path, nargs="?", help="a local git repository or mirror")
    mine.add_argument("--out", type=Path, help="the instances, JSON Lines (required with REPO)")
    mine.add_argument(
        "--name", help="owner/name of the repository (default: from REPO's <owner>__<name>)"
    )
    mine.add_argument("--rev", default="HEAD", help="a revision or range (A..B, X^..X)")
    mine.add_argument("--since", help="only changes committed after this date")
    mine.add_argument("--until", help="only changes committed before this date")
    mine.add_argument("--limit", type=int, help="at most this many commits of the walk")
    mine.add_argument("--path", action="append", default=[], help="only changes under these")
    mine.add_argument(
        "--sample", type=int, help="mine a seeded sample of N of the walk's candidate changes"
    )
    mine.add_argument("--seed", type=int, default=0, help="the sample's seed (default 0)")
    mine.add_argument(
        "--statements", type=Path, help='JSON Lines of {"commit", "problem_statement"}'
    )
    mine.add_argument(
        "--no-run",
        action="store_true",
        help="candidates only: no environment, no test lists (rows that are not instances yet)",
    )
    mine.add_argument("--timeout", type=float, default=300.0, help="seconds per test run")
    mine.add_argument("--fresh", action="store_true", help="start over: forget earlier output")
    mine.add_argument(
        "--example",
        type=Path,
        metavar="DIR",
        help="unpack the shipped example history as DIR/example__tally, then mine it as REPO",
    )
    mine.set_defaults(func=_mine)


def repo_name(path: Path, given: str | None) -> str:
    """owner/name: ``--name``'s, else from REPO's own name, ``<owner>__<name>``."""
    if given:
        if not _REPO.match(given):
            raise UsageError(f"--name must be owner/name, not {given!r}", "mine")
        return given
    found = _NAME.match(path.resolve().name)
    if not found:
        raise UsageError(
            f"cannot tell owner/name from {path.name!r}: name the repository with --name "
            "OWNER/NAME, or keep it as <dir>/<owner>__<name>",
            "mine",
        )
    return f"{found[1]}/{found[2]}"


def _mine(ns: argparse.Namespace) -> int:
    from ..mine import history
    from ..mine.example_history import ExampleError, unpack_example
    from ..mine.statement import read_supplied

    if ns.example is not None:
        if ns.repo is not None:
            raise UsageError("--example unpacks a repository to mine: give it without REPO", "mine")
        try:
            mirror = unpack_example(Path(ns.example))
        except ExampleError as exc:
            raise UsageError(str(exc), "mine") from None
        print(f"{mirror}: the example history; mine it with\n"
              f"  toolpolicy mine {mirror} --out {Path(ns.example) / 'mined.jsonl'}")  # fmt: skip
        return 0
    if ns.repo is None or ns.out is None:
        raise UsageError("give REPO and --out FILE.jsonl (or --example DIR)", "mine")
    if ns.sample is not None and ns.sample < 1:
        raise UsageError(f"--sample must be a positive number of changes, not {ns.sample}", "mine")
    repo = Path(ns.repo)
    if not repo.is_dir():
        raise UsageError(f"{repo} is not a directory", "mine")
    name = repo_name(repo, ns.name)
    supplied = None
    if ns.statements:
        try:
            supplied = read_supplied(ns.statements)
        except (OSError, ValueError) as exc:
            raise UsageError(str(exc), "mine") from None
    try:
        walk = history.commits(
            repo, ns.rev, since=ns.since, until=ns.until, limit=ns.limit, paths=ns.path
        )
    except history.MineError as exc:
        raise UsageError(str(exc), "mine") from None
    return _walk(ns, repo, name, walk, supplied)


def _walk(ns: argparse.Namespace, repo: Path, name: str, walk: list[str], supplied: Any) -> int:
    """Mine each change of ``walk`` not done before, a line each, then what was kept."""
    from ..mine import output
    from ..mine.mine import Setup, mine_change
    from .inputs import say_skipped

    out = Path(ns.out)
    skipped = output.skipped_file(out)
    if ns.fresh:
        for path in (out, skipped):
            path.unlink(missing_ok=True)
    done: set[str] = set()
    for path, key in ((out, "mined_from"), (skipped, "commit")):
        commits, torn = output.done(path, key)
        say_skipped("mine", torn)
        done |= commits
    todo = [c for c in walk if c not in done]
    print(f"{name}: {len(walk)} commits in the walk, {len(walk) - len(todo)} done before")
    dropped = Counter[str]()
    if ns.sample is not None:
        todo, candidates, size = output.sampled(
            repo, walk, todo, ns.sample, ns.seed, skipped, dropped
        )
        print(f"{candidates} candidate changes; a sample of {size}, seed {ns.seed}")
    with tempfile.TemporaryDirectory(prefix="toolpolicy-mine-repos-") as tmp:
        repos = output.repos_dir(repo, name, Path(tmp))
        setup = Setup(name, repos, None, timeout=ns.timeout, run=not ns.no_run, supplied=supplied)
        kept = 0
        for number, commit in enumerate(todo, 1):
            mined = mine_change(repo, commit, setup)
            output.append(out if mined.row else skipped, output.line(mined))
            if mined.row:
                kept += 1
                lists = f"{len(mined.row['FAIL_TO_PASS'])} FAIL_TO_PASS"
                what = f"kept ({lists})" if setup.run else "a candidate (no lists: not run)"
            else:
                dropped[mined.kind] += 1
                what = f"dropped: {mined.skipped}"
            env = f" (environment {mined.env_seconds:.0f}s)" if mined.env_seconds >= 1 else ""
            print(
                f"[{number}/{len(todo)}] {commit[:12]} {mined.seconds:.0f}s{env} {what}", flush=True
            )
    kinds = ", ".join(f"{k} {n}" for k, n in dropped.most_common()) or "none"
    what = "instances" if setup.run else "candidates (not instances until their tests run)"
    print(f"{kept} {what} kept in {out}; dropped: {kinds} (why, per change: {skipped})")
    return 0
