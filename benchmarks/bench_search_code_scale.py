"""search_code at a real repository's scale, as the agent meets it: one checkout, a fresh
index with the default candidate pool, an empty embedding cache; the first query (which loads
the model) and then new queries, each a text not asked before. Prints figures; not a test.

    .venv/bin/python benchmarks/bench_search_code_scale.py --root CHECKOUT [--root ...]

A checkout is any directory of Python source (a cached checkout under
``~/.cache/pytest-toolpolicy/repos/<owner>__<name>/<commit>``). Target (issue 29): a new
query after the first within 1 s, on pytest-dev/pytest and sympy/sympy.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

QUERIES = [
    "how a fixture's scope is checked when it is requested",
    "parse the command line options of a plugin",
    "collect test functions from a python module",
    "report of a failed assertion with a diff of two lists",
    "capture what a test writes to standard output",
    "temporary directory for each test",
    "skip a test when a module cannot be imported",
    "mark a test as expected to fail",
    "parametrize a test with several argument sets",
    "warnings raised during a test are recorded",
    "simplify a rational expression",
    "solve a polynomial equation for one symbol",
    "matrix determinant by row reduction",
    "print an expression as latex",
    "integrate a trigonometric function",
    "series expansion around a point",
    "factor an integer into primes",
    "derivative of a product of functions",
    "substitute a value for a symbol",
    "limit of a sequence at infinity",
]


def one(root: Path, new: int) -> None:
    from pytest_toolpolicy.primitives.codeindex import CodeIndex
    from pytest_toolpolicy.primitives.search_code import CodeSearch

    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        os.environ["TOOLPOLICY_CACHE_DIR"] = tmp  # an empty embedding cache
        t0 = time.perf_counter()
        index = CodeIndex(root)
        search = CodeSearch(index)
        t1 = time.perf_counter()
        first = search.search("where the configuration file is read")
        t2 = time.perf_counter()
        assert first["ok"], first
        times = []
        for query in QUERIES[:new]:
            start = time.perf_counter()
            result = search.search(query)
            times.append(time.perf_counter() - start)
            assert result["ok"], result
        again = time.perf_counter()
        search.search(QUERIES[0])
        repeat = time.perf_counter() - again
    data = first["data"]
    print(f"{root}: {data['total_entities']:,} entities, ranker {data['ranker']}")
    print(f"  index (CodeIndex + CodeSearch): {t1 - t0:.2f} s; first query: {t2 - t1:.2f} s")
    print(
        f"  {len(times)} new queries: median {statistics.median(times):.2f} s, "
        f"max {max(times):.2f} s, within 1 s: {sum(t <= 1.0 for t in times)}/{len(times)}"
    )
    print(f"  a repeated query: {repeat:.3f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, action="append", required=True)
    parser.add_argument("--new", type=int, default=len(QUERIES), help="new queries per root")
    args = parser.parse_args()
    for root in args.root:
        one(root.resolve(), args.new)


if __name__ == "__main__":
    main()
