"""SWE-bench's log parsers made linear (``grading/parsers.py``), on the logs that make SWE-bench's
own code backtrack: time against size, and SWE-bench's code (transcribed in
tests/grading/swebench_reference.py) side by side on the sizes it can still finish.

The new parser is timed at 0.25, 0.5, 1 and 2 MB (the best of --runs) and the growth per
doubling of the size printed: about 2× is linear, about 4× the square. SWE-bench's is timed
once per size on small inputs, next to the new one on the same input (whose result must equal
SWE-bench's).

- sympy: spaces, then ".py:" with no space after (``re.findall(r"(_*) (.*)\\.py:(.*) (_*)")``
  tries every space against every ".py:" against the rest of the line);
- django: verbose lines cut off by "Testing against Django installed in" with no
  "silenced)." after (the lazy ``(?s:.*?)`` rescans the rest of the log from every line);
- django: one line of "Internal Server Error: /" headers (each rescans the line for "/\\n", which is not there).

    .venv/bin/python benchmarks/bench_log_parsers.py [--runs 3]
"""

from __future__ import annotations

import argparse
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from scaling import MB, SIZES, best, growth, timed  # benchmarks/scaling.py

from pytest_toolpolicy.grading.parsers import parse_log

REFERENCE_FILE = Path(__file__).parents[1] / "tests" / "grading" / "swebench_reference.py"


def reference() -> ModuleType:
    spec = importlib.util.spec_from_file_location("swebench_reference", REFERENCE_FILE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class Case:
    name: str
    parser: str
    make: Callable[[int], str]  # a log of about this many characters
    old_sizes: tuple[int, ...]


CASES = (
    Case(
        "sympy: spaces, then .py: alone",
        "sympy",
        lambda n: " " * (n // 5) + ".py:" * (n // 5),
        (400, 800, 1_600),
    ),  # fmt: skip
    Case(
        "django: Testing against ... never closed",
        "django",
        lambda n: "t ... Testing against Django installed in x\n" * (n // 44),
        (44_000, 88_000, 176_000),
    ),
    Case(
        "django: Internal Server Error headers on one line",
        "django",
        lambda n: "t ... Internal Server Error: /" * (n // 30) + "x\nok",
        (15_000, 30_000, 60_000),
    ),
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    swebench = reference().REFERENCE
    print(f"new: best of {runs} runs; SWE-bench: one run; growth: time ratio per doubling\n")
    for case in CASES:
        print(case.name)
        new = lambda log, p=case.parser: parse_log(log, p)  # noqa: E731
        news = [best(new, case.make(size), runs) for size in SIZES]
        cells = "  ".join(f"{s / MB:g} MB {t:6.3f}s" for s, t in zip(SIZES, news, strict=True))
        print(f"  new       {cells}   growth {growth(news)}")
        olds, beside = [], []
        for size in case.old_sizes:
            log = case.make(size)
            took, was = timed(swebench[case.parser], log)
            if new(log) != was:
                raise SystemExit(f"{case.name}: the new parser differs from SWE-bench's at {size}")
            olds.append(took)
            beside.append(best(new, log, runs))
        cells = "  ".join(
            f"{s / 1000:g} k {o:7.3f}s (new {n:.4f}s)"
            for s, o, n in zip(case.old_sizes, olds, beside, strict=True)
        )
        print(f"  SWE-bench {cells}   growth {growth(olds)}\n")


if __name__ == "__main__":
    main()
