"""Each scan of untrusted text made linear, on adversarial input: time against size, and the
scan it replaced side by side on the sizes that one can still finish.

For each scanner, the new one is timed at 0.25, 0.5, 1 and 2 MB of the input that was worst for
the old one (the best of --runs), and the growth per doubling of the size is printed: about 2×
is linear, about 4× the square. The old one is timed once per size on inputs small enough to
end, next to the new one on the same input (whose result must equal the old one's). Timings
run with the garbage collector off, as ``timeit`` runs them.

- the symbol trigger: one long word (``SYMBOL_RE.finditer`` read on to the word's end from every
  position), and CamelCase words among dotted tokens under SYMBOL_CAMEL=1 (each word was checked
  against every token);
- the duration mask of test output: a line of status words and no duration;
- run_test's target tokens: a run of "[" that no "]" closes;
- the count of an edit's search: overlapping places (a search of half the text's length);
- the viewer's split of a grade by test list: the lists rebuilt for every test;
- SWE-bench's ``pytest_options`` reading of a test id: a run of "[" (its regex was cubic).

    .venv/bin/python benchmarks/bench_text_scans.py [--runs 5]
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scaling import MB, SIZES, best, growth, timed  # benchmarks/scaling.py

from pytest_toolpolicy.grading.testids import swebench_id
from pytest_toolpolicy.policy.triggers import CAMEL_RE, symbol_tokens
from pytest_toolpolicy.primitives import volatile
from pytest_toolpolicy.primitives.matching import occurrences
from pytest_toolpolicy.primitives.run_test import _TOKEN, target_tokens
from pytest_toolpolicy.primitives.symbols import SYMBOL_RE
from pytest_toolpolicy.view.item_html import _grade


@dataclass(frozen=True)
class Scan:
    name: str
    make: Callable[[int], Any]  # adversarial input of about this many characters (or bytes)
    new: Callable[[Any], Any]
    old: Callable[[Any], Any]
    old_sizes: tuple[int, ...]


def old_symbol_tokens(text: str, camel: bool = False) -> list[str]:
    found = [(m.start(), m.group(0)) for m in SYMBOL_RE.finditer(text)]
    if camel:
        spans = [(m.start(), m.end()) for m in SYMBOL_RE.finditer(text)]
        for m in CAMEL_RE.finditer(text):
            if not any(lo <= m.start() and m.end() <= hi for lo, hi in spans):
                found.append((m.start(), m.group(0)))
    return list(dict.fromkeys(token for _, token in sorted(found)))


def old_occurrences(text: str, search: str) -> int:
    count, at = 0, text.find(search)
    while at != -1:
        count += 1
        at = text.find(search, at + 1)
    return count


def grade_input(size: int) -> tuple[dict[str, Any], dict[str, Any]]:
    n = size // 50  # two ids of ~25 characters per step
    f2p = [f"tests/test_a.py::test_{i:07d}" for i in range(n)]
    p2p = [f"tests/test_b.py::test_{i:07d}" for i in range(n)]
    tests = {t: "passed" for t in f2p + p2p}
    grade: dict[str, Any] = {"status": "resolved", "tests": tests, "ignored": [], "reason": None}
    return grade, {"FAIL_TO_PASS": f2p, "PASS_TO_PASS": p2p}


def old_grade_split(args: tuple[dict[str, Any], dict[str, Any]]) -> list[str]:
    """The split as it was (only the split: the rest of the grade's markup is not timed)."""
    grade, instance = args
    f2p, p2p = instance["FAIL_TO_PASS"], instance["PASS_TO_PASS"]
    return [t for t in grade["tests"] if t not in set(f2p) | set(p2p)]


def options_input(size: int) -> str:
    return "t.py::test_a" + "[" * size + "/x/y]"


def old_options_id(test: str) -> str:
    """SWE-bench's own reading, its regex and all."""
    found = re.search(r"(.*?)\[(.*)\]", test)
    if found:
        main, option = found.groups()
        if option.startswith("/") and not option.startswith("//") and "*" not in option:
            option = "/" + option.split("/")[-1]
        test = f"{main}[{option}]"
    return test


def new_grade(args: tuple[dict[str, Any], dict[str, Any]]) -> str:
    return _grade(args[0], args[1], str)


SCANS = (
    Scan(
        "symbol trigger: one long word",
        lambda n: "a" * n,
        symbol_tokens,
        old_symbol_tokens,
        (2_500, 5_000, 10_000),
    ),
    Scan(
        "symbol trigger: camel words among tokens",
        lambda n: "Foo a.b " * (n // 8),
        lambda text: symbol_tokens(text, camel=True),
        lambda text: old_symbol_tokens(text, camel=True),
        (10_000, 20_000, 40_000),
    ),
    Scan(
        "test output mask: status words",
        lambda n: "passed " * (n // 7),
        volatile.mask_volatile,
        lambda text: volatile._ADDRESS.sub(
            "at 0x…", volatile._PYTEST_SUMMARY.sub(r"\1 in ?s", text)
        ),
        (10_000, 20_000, 40_000),
    ),
    Scan(
        'run_test target: unclosed "["',
        lambda n: "[" * n,
        target_tokens,
        _TOKEN.findall,
        (5_000, 10_000, 20_000),
    ),
    Scan(
        "edit search count: half the text",
        lambda n: ("a" * n, "a" * (n // 2)),
        lambda args: occurrences(*args),
        lambda args: old_occurrences(*args),
        (20_000, 40_000, 80_000),
    ),
    Scan(
        "viewer grade split: test ids",
        grade_input,
        new_grade,
        old_grade_split,
        (50_000, 100_000, 200_000),
    ),
    Scan(
        "pytest_options test id: brackets",
        options_input,
        lambda test: swebench_id(test, "pytest_options"),
        old_options_id,
        (250, 500, 1_000),
    ),
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    print(f"new: best of {runs} runs; old: one run; growth: time ratio per doubling of the size\n")
    for scan in SCANS:
        print(scan.name)
        news = [best(scan.new, scan.make(size), runs) for size in SIZES]
        cells = "  ".join(f"{s / MB:g} MB {t:6.3f}s" for s, t in zip(SIZES, news, strict=True))
        print(f"  new  {cells}   growth {growth(news)}")
        olds, beside = [], []
        for size in scan.old_sizes:
            arg = scan.make(size)
            took, was = timed(scan.old, arg)
            now = scan.new(arg)
            if scan.old is not old_grade_split and now != was:
                raise SystemExit(f"{scan.name}: the new scan differs from the old at {size}")
            olds.append(took)
            beside.append(best(scan.new, arg, runs))
        cells = "  ".join(
            f"{s / 1000:g} k {o:6.3f}s (new {n:.4f}s)"
            for s, o, n in zip(scan.old_sizes, olds, beside, strict=True)
        )
        print(f"  old  {cells}   growth {growth(olds)}\n")


if __name__ == "__main__":
    main()
