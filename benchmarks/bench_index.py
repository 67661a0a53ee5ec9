"""Code index and search_symbol on the largest real package in the venv (pandas' source).

Prints figures side by side from one run; nothing here is a timed assertion.
Targets (issue 'Foundation'): cold index ≤ 1.5× bare ast.parse; re-index after one edit
≤ 50 ms; search_symbol p50 ≤ 5 ms.
"""

from __future__ import annotations

import ast
import contextlib
import gc
import importlib.util
import random
import statistics
import sys
import time
from pathlib import Path

from pytest_toolpolicy.primitives.codeindex import CodeIndex, read_text
from pytest_toolpolicy.primitives.search_symbol import SymbolSearch


def package_root(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        sys.exit(f"{name} is not installed in this interpreter")
    return Path(next(iter(spec.submodule_search_locations)))


def best_of(runs: int, fn) -> float:
    times = []
    for _ in range(runs):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def bare_parse(files: list[Path]) -> None:
    for path in files:
        text = read_text(path)
        if text is not None:
            with contextlib.suppress(SyntaxError):
                ast.parse(text)


def main() -> None:
    root = package_root(sys.argv[1] if len(sys.argv) > 1 else "pandas")
    index = CodeIndex(root)
    files = [root / rel for rel in index.by_file]
    print(f"package: {root} — {len(files)} files, {len(index)} entities")

    bare = best_of(3, lambda: bare_parse(files))
    cold = best_of(3, lambda: CodeIndex(root, cache=False))  # parsed, not the parse cache
    print(
        f"cold index: {cold * 1000:.0f} ms vs bare read+ast.parse {bare * 1000:.0f} ms "
        f"→ {cold / bare:.2f}× (target ≤ 1.5×)"
    )

    rng = random.Random(0)
    sizes = sorted(index.by_file, key=lambda rel: (root / rel).stat().st_size)
    sample = rng.sample(list(index.by_file), 40)
    reindex = []
    for rel in sample:
        start = time.perf_counter()
        index.reindex(rel)
        reindex.append(time.perf_counter() - start)
    largest = sizes[-1]
    t_largest = best_of(3, lambda: index.reindex(largest))
    print(
        f"re-index after one edit: median {statistics.median(reindex) * 1000:.1f} ms over 40 "
        f"random files, max {max(reindex) * 1000:.1f} ms; largest file ({largest}, "
        f"{(root / largest).stat().st_size // 1024} KiB) {t_largest * 1000:.1f} ms (target ≤ 50 ms)"
    )

    search = SymbolSearch(index)
    build = best_of(1, lambda: search.search("x"))
    entities = index.entities()
    queries = [e.name for e in rng.sample(entities, 150)]
    queries += [e.selector.split(".", 1)[-1] for e in rng.sample(entities, 30)]
    queries += [e.name[:4] for e in rng.sample(entities, 20) if len(e.name) >= 4]
    latencies = []
    for query in queries:
        start = time.perf_counter()
        search.search(query, k=10)
        latencies.append(time.perf_counter() - start)
    latencies.sort()
    p50 = latencies[len(latencies) // 2] * 1000
    p95 = latencies[int(len(latencies) * 0.95)] * 1000
    print(
        f"search_symbol over {len(entities)} entities: first call (builds tables) "
        f"{build * 1000:.0f} ms; p50 {p50:.2f} ms, p95 {p95:.2f} ms over {len(queries)} "
        "queries (target p50 ≤ 5 ms)"
    )


if __name__ == "__main__":
    main()
