"""``toolpolicy mine REPO --out FILE.jsonl``: a repository's history as instances.

Each instance is appended to ``FILE.jsonl`` as it is mined, and each change that is dropped to
``FILE.skipped.jsonl`` with why: a walk that stops (an interrupt, a crash) loses nothing, and
run again it starts where it left off (``--fresh`` starts over). A line per change says how it
went; the end prints what was kept and, per kind, what was dropped.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from ..paths import write_atomic
from . import history
from .mine import Mined, Setup, mine_change
from .statement import read_supplied

_NAME = re.compile(r"^([A-Za-z0-9][\w.-]*)__([A-Za-z0-9][\w.-]*?)(?:\.git)?$")
_REPO = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")


class UsageError(Exception):
    pass


def add_parser(sub: Any) -> None:
    mine = sub.add_parser(
        "mine", help="mine a repository's history into instances (SWE-bench's schema)"
    )
    mine.add_argument("repo", type=Path, help="a local git repository or mirror")
    mine.add_argument("--out", required=True, type=Path, help="the instances, JSON Lines")
    mine.add_argument(
        "--name", help="owner/name of the repository (default: from REPO's <owner>__<name>)"
    )
    mine.add_argument("--rev", default="HEAD", help="a revision or range (A..B, X^..X)")
    mine.add_argument("--since", help="only changes committed after this date")
    mine.add_argument("--until", help="only changes committed before this date")
    mine.add_argument("--limit", type=int, help="at most this many commits of the walk")
    mine.add_argument("--path", action="append", default=[], help="only changes under these")
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
    mine.set_defaults(func=run)


def repo_name(path: Path, given: str | None) -> str:
    if given:
        if not _REPO.match(given):
            raise UsageError(f"--name must be owner/name, not {given!r}")
        return given
    found = _NAME.match(path.resolve().name)
    if not found:
        raise UsageError(
            f"cannot tell owner/name from {path.name!r}: name the repository with --name "
            "OWNER/NAME, or keep it as <dir>/<owner>__<name>"
        )
    return f"{found[1]}/{found[2]}"


def run(ns: argparse.Namespace) -> int:
    try:
        return _run(ns)
    except UsageError as exc:
        print(f"toolpolicy mine: {exc}")
        return 2


def _run(ns: argparse.Namespace) -> int:
    repo = Path(ns.repo)
    if not repo.is_dir():
        raise UsageError(f"{repo} is not a directory")
    name = repo_name(repo, ns.name)
    supplied = None
    if ns.statements:
        try:
            supplied = read_supplied(ns.statements)
        except (OSError, ValueError) as exc:
            raise UsageError(str(exc)) from None
    try:
        walk = history.commits(
            repo, ns.rev, since=ns.since, until=ns.until, limit=ns.limit, paths=ns.path
        )
    except history.MineError as exc:
        raise UsageError(str(exc)) from None
    out, skipped = Path(ns.out), Path(f"{Path(ns.out).with_suffix('')}.skipped.jsonl")
    if ns.fresh:
        for path in (out, skipped):
            path.unlink(missing_ok=True)
    done = _done(out, "mined_from") | _done(skipped, "commit")
    todo = [c for c in walk if c not in done]
    print(f"{name}: {len(walk)} commits in the walk, {len(walk) - len(todo)} done before")
    with tempfile.TemporaryDirectory(prefix="toolpolicy-mine-repos-") as tmp:
        repos = _repos(repo, name, Path(tmp))
        setup = Setup(name, repos, None, timeout=ns.timeout, run=not ns.no_run, supplied=supplied)
        kept, dropped = 0, Counter[str]()
        for number, commit in enumerate(todo, 1):
            mined = mine_change(repo, commit, setup)
            _append(out if mined.row else skipped, _line(mined))
            if mined.row:
                kept += 1
                lists = f"{len(mined.row['FAIL_TO_PASS'])} FAIL_TO_PASS"
                what = f"kept ({lists})" if setup.run else "a candidate (no lists: not run)"
            else:
                dropped[mined.kind] += 1
                what = f"dropped: {mined.skipped}"
            print(f"[{number}/{len(todo)}] {commit[:12]} {mined.seconds:.0f}s {what}", flush=True)
    kinds = ", ".join(f"{k} {n}" for k, n in dropped.most_common()) or "none"
    what = "instances" if setup.run else "candidates (not instances until their tests run)"
    print(f"{kept} {what} kept in {out}; dropped: {kinds} (why, per change: {skipped})")
    return 0


def _repos(repo: Path, name: str, tmp: Path) -> Path:
    """The directory holding ``<owner>__<name>`` for the environment and workspaces: REPO's
    own parent where it is named so, else a link in ``tmp`` (the user's own path)."""
    folder = name.replace("/", "__")
    if repo.resolve().name in (folder, f"{folder}.git"):
        return repo.resolve().parent
    os.symlink(repo.resolve(), tmp / folder)
    return tmp


def _line(mined: Mined) -> dict[str, Any]:
    if mined.row is not None:
        return mined.row
    return {"commit": mined.commit, "kind": mined.kind, "why": mined.skipped}


def _append(path: Path, row: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(row) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def _done(path: Path, key: str) -> set[str]:
    """The commits a file of earlier output holds; a torn last line (a crash mid-write) is
    dropped from the file, so its commit is mined again."""
    if not path.exists():
        return set()
    found: set[str] = set()
    good: list[str] = []
    torn = False
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
            found.add(str(row[key]))
            good.append(line)
        except (ValueError, KeyError, TypeError):
            torn = True
    if torn:
        text = "".join(f"{line}\n" for line in good)
        write_atomic(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    return found
