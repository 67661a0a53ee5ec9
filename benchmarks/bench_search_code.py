"""search_code on the largest installed Python package: index size, cold and warm index time,
and search latency. Prints figures; not a test.

    .venv/bin/python benchmarks/bench_search_code.py [--root DIR] [--show 5]

Cold = empty cache dir, every summary embedded; warm = a fresh CodeIndex, Embedder and
CodeSearch over the same cache, which must embed nothing.
"""

from __future__ import annotations

import argparse
import os
import sysconfig
import tempfile
import time
from pathlib import Path

import numpy as np

from pytest_toolpolicy.primitives.codeindex import CodeIndex
from pytest_toolpolicy.primitives.embedder import Embedder, load_embedder, model_dir
from pytest_toolpolicy.primitives.search_code import CodeSearch

QUERIES = [
    "read a comma separated values file into a table",
    "write a table to an excel spreadsheet",
    "parse a string into a datetime",
    "convert a column to a categorical type",
    "fill missing values with the previous valid value",
    "drop rows that contain missing values",
    "group rows by key and sum each group",
    "merge two tables on a common column",
    "join two frames on their index",
    "concatenate several frames along an axis",
    "pivot a long table into a wide one",
    "melt wide columns into rows",
    "compute a rolling window mean",
    "exponentially weighted moving average",
    "resample a time series to monthly frequency",
    "shift values by a number of periods",
    "percentage change between consecutive elements",
    "rank values within a column",
    "sort a frame by the values of a column",
    "remove duplicate rows",
    "count occurrences of unique values",
    "cut continuous values into bins",
    "compute quantiles of a series",
    "correlation matrix between columns",
    "apply a function to every element",
    "render a frame as an html table",
    "serialize to json",
    "read a parquet file",
    "query a sql database into a frame",
    "format numbers for display in the console",
    "interpolate missing values linearly",
    "check whether two frames are equal in tests",
    "localize naive timestamps to a time zone",
    "generate a range of dates with a fixed frequency",
    "business day offsets that skip weekends",
    "sparse array storage for mostly zero data",
    "string methods vectorized over a series",
    "extract groups from strings with a regular expression",
    "hash rows of a frame into integers",
    "validate that an index is monotonic increasing",
    "multi level hierarchical index from tuples",
    "select rows by boolean mask",
    "label based indexing with loc",
    "set a value at a single position",
    "memory usage of a frame in bytes",
    "plot a histogram of a column",
    "infer the dtype of an array of python objects",
    "raise an error when a column name is ambiguous",
    "clip values to lower and upper thresholds",
    "cumulative sum along an axis",
]


def largest_package() -> Path:
    """The top-level package in site-packages holding the most Python source."""
    site = Path(sysconfig.get_paths()["purelib"])
    sizes = {}
    for pkg in site.iterdir():
        if (pkg / "__init__.py").is_file():
            sizes[pkg] = sum(p.stat().st_size for p in pkg.rglob("*.py"))
    return max(sizes, key=sizes.__getitem__)


def index_once(root: Path) -> tuple[CodeIndex, CodeSearch, Embedder, float, float]:
    """A fresh index and search over it, refreshed: (..., ast seconds, refresh seconds)."""
    t0 = time.perf_counter()
    index = CodeIndex(root)
    t1 = time.perf_counter()
    embedder = load_embedder()
    search = CodeSearch(index, embedder, pool=len(index))  # every summary, as documented
    ranker = search.refresh()
    t2 = time.perf_counter()
    if ranker != "embed":
        raise SystemExit(f"embedding unavailable: {search.ranker_note}")
    return index, search, embedder, t1 - t0, t2 - t1


def timed(search: CodeSearch, queries: list[str]) -> np.ndarray:
    """Milliseconds per search."""
    out = []
    for query in queries:
        t0 = time.perf_counter()
        result = search.search(query)
        out.append((time.perf_counter() - t0) * 1000)
        assert result["ok"], result
    return np.array(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=None, help="default: the largest package")
    parser.add_argument("--show", type=int, default=5, help="queries whose top match to print")
    parser.add_argument("--cache", type=Path, help="keep the cache here (cold only if empty)")
    args = parser.parse_args()
    root = (args.root or largest_package()).resolve()
    print(f"root: {root}", flush=True)

    with tempfile.TemporaryDirectory(prefix="bench-search-code-") as tmp:
        os.environ["TOOLPOLICY_CACHE_DIR"] = str(args.cache or tmp)
        os.environ.pop("TOOLPOLICY_EMBED_MODEL_DIR", None)
        t0 = time.perf_counter()
        model_dir()
        print(f"model assembly from packages: {time.perf_counter() - t0:.2f}s")

        index, _, cold, cold_ast, cold_s = index_once(root)
        print(f"entities: {len(index)} in {len(index.by_file)} files (CodeIndex {cold_ast:.1f}s)")
        per = cold_s / max(cold.embedded, 1) * 1000
        print(f"cold index: {cold_s:.1f}s, embedded {cold.embedded} ({per:.1f} ms each)")

        _, search, warm, warm_ast, warm_s = index_once(root)
        print(
            f"warm index: {warm_s:.2f}s, embedded {warm.embedded}, cache hits {warm.cache_hits}"
            f" (+ CodeIndex {warm_ast:.1f}s)"
        )

        first, repeat = timed(search, QUERIES), timed(search, QUERIES)
        for name, ms in (("new queries", first), ("repeated queries", repeat)):
            p50, p95 = np.percentile(ms, [50, 95])
            print(f"search, {len(ms)} {name}: p50 {p50:.1f} ms, p95 {p95:.1f} ms")
        for query in QUERIES[: args.show]:
            best = search.search(query, cap=1)["data"]["matches"]
            print(f"  {query!r} -> {best[0]['selector'] if best else None}")


if __name__ == "__main__":
    main()
