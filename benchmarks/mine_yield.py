"""Mining's yield over a long history: for each year of a repository's last ``--years`` years
(windows ending at its newest commit), ``toolpolicy mine`` walks every first-parent commit,
counts the candidate changes, mines a seeded sample of them (lists derived by running each
side twice), and ``toolpolicy validate`` checks what was kept. Prints a table per year; not a
test. Needs a local mirror (and the package index for first-use environment builds).

    .venv/bin/python benchmarks/mine_yield.py --mirror MIRRORS/pytest-dev__pytest \
        --out reports/yield [--years 5] [--sample 8] [--seed 0] [--table-only]

Each window's output (``<out>/<start>.jsonl``, its ``.skipped.jsonl`` and ``.validated.jsonl``)
is resumable: run again, it mines and validates only what is missing. Time per candidate is
the time to mine a sampled candidate less getting its environment (an environment is built on
a version's first use and found cached after); environment time is its own column.
Target (issue 30): the table in the README.
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import statistics
import subprocess
import sys
from collections import Counter
from pathlib import Path

BIN = Path(sys.executable).parent


def windows(mirror: Path, years: int) -> list[tuple[str, str]]:
    """``years`` one-year windows, the last ending just after the newest commit."""
    from pytest_toolpolicy.primitives import hostgit

    out = hostgit.run(["log", "-1", "--format=%cI", "HEAD"], cwd=mirror, error=RuntimeError)
    newest = datetime.datetime.fromisoformat(out.text.strip()).date() + datetime.timedelta(1)
    ends = [newest.replace(year=newest.year - k) for k in range(years)]
    return [(end.replace(year=end.year - 1).isoformat(), end.isoformat()) for end in reversed(ends)]


def mine(mirror: Path, out: Path, since: str, until: str, sample: int, seed: int) -> str:
    argv = [str(BIN / "toolpolicy"), "mine", str(mirror), "--out", str(out)]
    argv += ["--since", since, "--until", until, "--sample", str(sample), "--seed", str(seed)]
    done = subprocess.run(argv, text=True, capture_output=True)
    sys.stdout.write(done.stdout + done.stderr)
    return done.stdout


def validate(dataset: Path, repos: Path, record: Path) -> None:
    if not dataset.exists() or not dataset.read_text().strip():
        return
    done = {json.loads(line)["instance_id"] for line in _lines(record)}
    todo = [json.loads(line)["instance_id"] for line in _lines(dataset)]
    todo = [i for i in todo if i not in done]
    if todo:
        argv = [str(BIN / "toolpolicy"), "validate", "--dataset", str(dataset), "--repos",
                str(repos), "--record", str(record), "--ids", *todo]  # fmt: skip
        subprocess.run(argv, check=False)


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def row(window: tuple[str, str], out: Path, printed: str) -> dict[str, object]:
    kept = [json.loads(line) for line in _lines(out)]
    skipped = [json.loads(line) for line in _lines(out.with_suffix(".skipped.jsonl"))]
    record = out.with_suffix(".validated.jsonl")
    validated = {json.loads(line)["instance_id"]: json.loads(line) for line in _lines(record)}
    walk = re.search(r": (\d+) commits in the walk", printed)
    candidates = re.search(r"(\d+) candidate changes; a sample of (\d+)", printed)
    sampled = [r for r in skipped if r.get("kind") != "candidate"] + kept
    kinds = Counter(str(r.get("kind")) for r in skipped if r.get("kind") != "candidate")
    timed = [r["mining"] for r in sampled if isinstance(r.get("mining"), dict)]
    runs = [t["seconds"] - t["environment_seconds"] for t in timed if t["seconds"] >= 1]
    ok = sum(1 for r in kept if validated.get(r["instance_id"], {}).get("verdict") == "ok")
    return {
        "window": f"{window[0]} .. {window[1]}",
        "commits": int(walk[1]) if walk else None,
        "candidates": int(candidates[1]) if candidates else None,
        "sampled": len(sampled),
        "thin": kinds["statement"],
        "env/run": kinds["environment"] + kinds["run"],
        "no F2P": kinds["lists"],
        "kept": len(kept),
        "validated": f"{ok}/{len(kept)}",
        "s/candidate (median, max)": f"{statistics.median(runs):.0f}, {max(runs):.0f}"
        if runs else "-",
        "environment s (sum)": f"{sum(t['environment_seconds'] for t in timed):.0f}",
    }  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirror", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--years", type=int, default=5)
    ap.add_argument("--sample", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ns = ap.parse_args()
    ns.out.mkdir(parents=True, exist_ok=True)
    table = []
    for window in windows(ns.mirror, ns.years):
        out = ns.out / f"{window[0]}.jsonl"
        printed = mine(ns.mirror, out, *window, ns.sample, ns.seed)
        validate(out, ns.mirror.parent, out.with_suffix(".validated.jsonl"))
        table.append(row(window, out, printed))
    keys = list(table[0])
    print("\n| " + " | ".join(keys) + " |\n|" + "---|" * len(keys))
    for entry in table:
        print("| " + " | ".join(str(entry[k]) for k in keys) + " |")


if __name__ == "__main__":
    main()
