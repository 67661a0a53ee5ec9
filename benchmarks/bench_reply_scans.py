"""The scans of a model's reply and an endpoint's body, on hostile input: time against size.

Each scan is timed at 0.25, 0.5, 1 and 2 MB of its input (the best of --runs) and the growth per
doubling of the size is printed: about 2× is linear, about 4× the square. Where a scan replaced
a quadratic one, the old one is timed once per size on inputs small enough to end, next to the
new one on the same input (whose result must equal the old one's).

- the nesting bound (``jsonsafe.check_depth``): brackets, quotes, escaped quotes (after 65
  brackets, so that they are measured rather than passed on their count), and a body whose only
  depth is inside its strings;
- the policy's reply parser: spaces inside a code fence (the fence pattern retried the run of
  spaces from every position in it), brackets, calls back to back with spaces between them;
- the baseline's reply parser: the same fence, brackets, a list of calls.

    .venv/bin/python benchmarks/bench_reply_scans.py [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scaling import MB, SIZES, best, growth, timed  # benchmarks/scaling.py

from pytest_toolpolicy import jsonsafe
from pytest_toolpolicy.current import prompt as current
from pytest_toolpolicy.policy import parse as policy

OLD_FENCE = re.compile(r"\A```(?:json)?[ \t]*\n(.*?)\n?[ \t]*```\Z", re.DOTALL)
CALL = '{"tool": "search_code", "args": {"query": "x"}}'


@dataclass(frozen=True)
class Scan:
    name: str
    make: Callable[[int], Any]  # hostile input of about this many characters (or bytes)
    new: Callable[[Any], Any]
    old: Callable[[Any], Any] | None = None
    old_sizes: tuple[int, ...] = ()


def old_unfenced(body: str) -> str:
    fenced = OLD_FENCE.match(body)
    return fenced.group(1) if fenced else body


def bounded(text: Any) -> bool:
    try:
        jsonsafe.check_depth(text)
    except jsonsafe.TooDeep:
        return False
    return True


def fenced_spaces(n: int) -> str:
    return "```\n" + " " * n + "x\n```"


SCANS = (
    Scan("nesting bound: brackets (bytes)", lambda n: b"[" * n, bounded),
    # Each with brackets enough to be measured, not passed on their count alone.
    Scan("nesting bound: quotes (bytes)", lambda n: b"[" * 65 + b'"' * n, bounded),
    Scan(
        "nesting bound: escaped quotes (str)", lambda n: "[" * 65 + '"' + '\\"' * (n // 2), bounded
    ),
    Scan(
        "nesting bound: brackets inside strings (str)",
        lambda n: json.dumps(["[" * 20] * (n // 24)),
        bounded,
    ),
    Scan(
        "policy parser: fence around spaces",
        fenced_spaces,
        policy.parse_reply,
        lambda text: old_unfenced(text.strip()),
        (5_000, 10_000, 20_000),
    ),
    Scan("policy parser: brackets", lambda n: "[" * n, policy.parse_reply),
    Scan(
        "policy parser: calls with spaces between",
        lambda n: (CALL + " " * 100) * (n // (len(CALL) + 100)),
        policy.parse_reply,
    ),
    Scan("baseline parser: fence around spaces", fenced_spaces, current.parse_reply),
    Scan("baseline parser: brackets", lambda n: "[" * n, current.parse_reply),
    Scan(
        "baseline parser: a list of calls",
        lambda n: "[" + ", ".join([CALL] * (n // (len(CALL) + 2))) + "]",
        current.parse_reply,
    ),
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    print(f"new: best of {runs} runs; old: one run; growth: time ratio per doubling of the size\n")
    for scan in SCANS:
        print(scan.name)
        news = [best(scan.new, scan.make(size), runs) for size in SIZES]
        cells = "  ".join(f"{s / MB:g} MB {t:6.3f}s" for s, t in zip(SIZES, news, strict=True))
        print(f"  new  {cells}   growth {growth(news)}")
        if scan.old is None:
            print()
            continue
        olds, beside = [], []
        for size in scan.old_sizes:
            text = scan.make(size)
            took, was = timed(scan.old, text)
            if policy._unfenced(text.strip()) != was:
                raise SystemExit(f"{scan.name}: the new fence differs from the old at {size}")
            olds.append(took)
            beside.append(best(scan.new, text, runs))
        cells = "  ".join(
            f"{s // 1000} k {o:6.3f}s (new {n:.4f}s)"
            for s, o, n in zip(scan.old_sizes, olds, beside, strict=True)
        )
        print(f"  old  {cells}   growth {growth(olds)}\n")


if __name__ == "__main__":
    main()
