"""The files a walk writes: each instance appended to ``FILE.jsonl`` as it is mined, and each
change that is dropped to ``FILE.skipped.jsonl`` with why, each line synced before the next
change starts. A walk that stops (an interrupt, a crash) loses nothing, and run again it reads
both back and starts where it left off."""

from __future__ import annotations

import json
import os
import random
from collections import Counter
from pathlib import Path
from typing import Any

from ..input_files import RecordError, Skipped, scan_jsonl
from ..paths import write_atomic
from . import history
from .mine import Mined


def skipped_file(out: Path) -> Path:
    """Where the changes dropped from ``out`` are recorded: ``FILE.skipped.jsonl``."""
    return Path(f"{out.with_suffix('')}.skipped.jsonl")


def line(mined: Mined) -> dict[str, Any]:
    """What is recorded of a change: its instance row, else why it was dropped."""
    # how long mining took, kept with each line: a yield table reads it back
    took = {"seconds": round(mined.seconds, 2), "environment_seconds": round(mined.env_seconds, 2)}
    if mined.row is not None:
        return mined.row | {"mining": took}
    return {"commit": mined.commit, "kind": mined.kind, "why": mined.skipped, "mining": took}


def append(path: Path, row: dict[str, Any]) -> None:
    """``row`` as the last line of ``path``, on disk before this returns."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(row) + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def done(path: Path, key: str) -> tuple[set[str], Skipped]:
    """The commits a file of earlier output holds, and the lines that hold none (a crash
    mid-write tears the last one): those are dropped from the file, so their commits are mined
    again."""
    skipped = Skipped(path)
    if not path.exists():
        return set(), skipped
    kept = list(scan_jsonl(path, lambda row: _commit(row, key), skipped))
    if skipped:
        old = path.read_bytes()
        lines = [old[e.offset : e.offset + e.length].rstrip(b"\n") + b"\n" for e in kept]
        write_atomic(path, lambda tmp: tmp.write_bytes(b"".join(lines)))
    return {entry.record for entry in kept}, skipped


def sampled(
    repo: Path, walk: list[str], todo: list[str], size: int, seed: int, skipped: Path,
    dropped: Counter[str],
) -> tuple[list[str], int, int]:  # fmt: skip
    """A seeded sample of the walk's candidates, in walk order, less those done before; how
    many candidates there were, and how many the sample holds. Each change that is no
    candidate is recorded as dropped. The sample is drawn from the whole walk's candidates, so
    a resumed run draws the same one."""
    candidates = []
    for commit in walk:
        try:
            why = history.candidate_reason(history.change(repo, commit))
        except history.MineError as exc:
            why = str(exc)
        if why is None:
            candidates.append(commit)
        elif commit in todo:
            append(skipped, {"commit": commit, "kind": "candidate", "why": why})
            dropped["candidate"] += 1
    chosen = set(random.Random(seed).sample(candidates, min(size, len(candidates))))
    return [c for c in walk if c in chosen and c in todo], len(candidates), len(chosen)


def repos_dir(repo: Path, name: str, tmp: Path) -> Path:
    """The directory holding ``<owner>__<name>`` for the environment and workspaces: REPO's
    own parent where it is named so, else a link in ``tmp`` (the user's own path)."""
    folder = name.replace("/", "__")
    if repo.resolve().name in (folder, f"{folder}.git"):
        return repo.resolve().parent
    os.symlink(repo.resolve(), tmp / folder)
    return tmp


def _commit(row: Any, key: str) -> str:
    if not isinstance(row, dict) or not isinstance(row.get(key), str):
        raise RecordError(f"no {key} named")
    return str(row[key])
