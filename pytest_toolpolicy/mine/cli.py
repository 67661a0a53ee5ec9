"""``toolpolicy mine REPO --out FILE.jsonl``: a repository's history as instances.

Each instance is appended to ``FILE.jsonl`` as it is mined, and each change that is dropped to
``FILE.skipped.jsonl`` with why: a walk that stops (an interrupt, a crash) loses nothing, and
run again it starts where it left off (``--fresh`` starts over). A line per change says how it
went; the end prints what was kept and, per kind, what was dropped.

``--sample N`` mines a seeded sample of the walk's candidate changes (a long history's yield
measured without running every change); the candidate check is cheap, so it runs on the whole
walk first. ``--example DIR`` unpacks the history this package ships (``example/tally.fi``, a
small project with fixes, a merged pull request and each kind of change mining drops) as the
mirror ``DIR/example__tally``, to mine as any repository.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from ..bench.bundled_repos import StreamError, import_stream
from ..cli_inputs import say_skipped
from ..input_files import RecordError, Skipped, scan_jsonl
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
        print(f"toolpolicy mine: {exc}", file=sys.stderr)
        return 2


EXAMPLE = Path(__file__).parent / "example" / "tally.fi"
EXAMPLE_NAME = "example__tally"


def unpack_example(into: Path) -> Path:
    """The example history as a new bare mirror ``into/example__tally``."""
    into = into.absolute()  # git runs in the mirror's parent: a relative path would nest
    mirror = into / EXAMPLE_NAME
    if mirror.exists():
        raise UsageError(f"{mirror} exists: remove it, or mine it as it is")
    into.mkdir(parents=True, exist_ok=True)
    try:
        import_stream(EXAMPLE.read_bytes(), mirror, StreamError)
    except (OSError, StreamError) as exc:
        raise UsageError(f"cannot unpack the example: {exc}") from None
    return mirror


def _run(ns: argparse.Namespace) -> int:
    if ns.example is not None:
        if ns.repo is not None:
            raise UsageError("--example unpacks a repository to mine: give it without REPO")
        mirror = unpack_example(Path(ns.example))
        print(f"{mirror}: the example history; mine it with\n"
              f"  toolpolicy mine {mirror} --out {Path(ns.example) / 'mined.jsonl'}")  # fmt: skip
        return 0
    if ns.repo is None or ns.out is None:
        raise UsageError("give REPO and --out FILE.jsonl (or --example DIR)")
    if ns.sample is not None and ns.sample < 1:
        raise UsageError(f"--sample must be a positive number of changes, not {ns.sample}")
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
    dropped = Counter[str]()
    if ns.sample is not None:
        todo = _sampled(repo, walk, todo, ns.sample, ns.seed, skipped, dropped)
    with tempfile.TemporaryDirectory(prefix="toolpolicy-mine-repos-") as tmp:
        repos = _repos(repo, name, Path(tmp))
        setup = Setup(name, repos, None, timeout=ns.timeout, run=not ns.no_run, supplied=supplied)
        kept = 0
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
            env = f" (environment {mined.env_seconds:.0f}s)" if mined.env_seconds >= 1 else ""
            print(
                f"[{number}/{len(todo)}] {commit[:12]} {mined.seconds:.0f}s{env} {what}", flush=True
            )
    kinds = ", ".join(f"{k} {n}" for k, n in dropped.most_common()) or "none"
    what = "instances" if setup.run else "candidates (not instances until their tests run)"
    print(f"{kept} {what} kept in {out}; dropped: {kinds} (why, per change: {skipped})")
    return 0


def _sampled(
    repo: Path, walk: list[str], todo: list[str], size: int, seed: int, skipped: Path,
    dropped: Counter[str],
) -> list[str]:  # fmt: skip
    """A seeded sample of the walk's candidates, in walk order, less those done before; each
    change that is no candidate is recorded as dropped. The sample is drawn from the whole
    walk's candidates, so a resumed run draws the same one."""
    candidates = []
    for commit in walk:
        try:
            why = history.candidate_reason(history.change(repo, commit))
        except history.MineError as exc:
            why = str(exc)
        if why is None:
            candidates.append(commit)
        elif commit in todo:
            _append(skipped, {"commit": commit, "kind": "candidate", "why": why})
            dropped["candidate"] += 1
    chosen = set(random.Random(seed).sample(candidates, min(size, len(candidates))))
    print(f"{len(candidates)} candidate changes; a sample of {len(chosen)}, seed {seed}")
    return [c for c in walk if c in chosen and c in todo]


def _repos(repo: Path, name: str, tmp: Path) -> Path:
    """The directory holding ``<owner>__<name>`` for the environment and workspaces: REPO's
    own parent where it is named so, else a link in ``tmp`` (the user's own path)."""
    folder = name.replace("/", "__")
    if repo.resolve().name in (folder, f"{folder}.git"):
        return repo.resolve().parent
    os.symlink(repo.resolve(), tmp / folder)
    return tmp


def _line(mined: Mined) -> dict[str, Any]:
    # how long mining took, kept with each line: a yield table reads it back
    took = {"seconds": round(mined.seconds, 2), "environment_seconds": round(mined.env_seconds, 2)}
    if mined.row is not None:
        return mined.row | {"mining": took}
    return {"commit": mined.commit, "kind": mined.kind, "why": mined.skipped, "mining": took}


def _append(path: Path, row: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(row) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def _done(path: Path, key: str) -> set[str]:
    """The commits a file of earlier output holds; a line that holds none (a crash mid-write
    tears the last one) is said, and dropped from the file, so its commit is mined again."""
    if not path.exists():
        return set()
    skipped = Skipped(path)
    kept = list(scan_jsonl(path, lambda row: _commit(row, key), skipped))
    if skipped:
        say_skipped("mine", skipped)
        old = path.read_bytes()
        lines = [old[e.offset : e.offset + e.length].rstrip(b"\n") + b"\n" for e in kept]
        write_atomic(path, lambda tmp: tmp.write_bytes(b"".join(lines)))
    return {entry.record for entry in kept}


def _commit(row: Any, key: str) -> str:
    if not isinstance(row, dict) or not isinstance(row.get(key), str):
        raise RecordError(f"no {key} named")
    return str(row[key])
