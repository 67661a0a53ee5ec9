"""search_code and search_symbol on a real repository checkout: old vs new, side by side.

    .venv/bin/python benchmarks/bench_real_repo.py [--repo PATH] [--pool N] [--no-old]

``--repo`` (default ``$TOOLPOLICY_BENCH_REPO``) is a checkout, e.g. pytest at a SWE-bench base
commit. Without one, a synthetic repository of ~5,000 entities is generated and the output says
so. Prints figures; not a test, and it needs no network.

Every figure comes from a fresh child process (peak RSS is the child's own ``VmHWM``), each with
an empty cache directory unless it says "warm":
- new: the parse cache, BM25 picking ``--pool`` candidates per query, only those embedded;
- old: every entity embedded before the first query is ranked (a pool as large as the corpus,
  which is what search_code did for every repository) and the index parsed with no cache;
- warm: a second process over the first one's caches (the next instance at the same commit, or
  the next CLI call);
- CLI: ``toolpolicy primitive`` running one search_symbol, as a user calls it, cold and warm.
Targets (issue 12): first search_code <= 10 s and <= 300 MB, a repeated one <= 0.5 s,
search_symbol p50 <= 5 ms once indexed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUERIES = [
    "caplog records are not cleared when the log handler is reset",
    "skip marker evaluated with a condition string",
    "capture output written to a file descriptor by a subprocess",
    "relative path of a test file from the root directory",
    "rewrite an assert statement to explain a failing comparison",
]
_WORDS = [
    "parse",
    "load",
    "save",
    "cache",
    "token",
    "stream",
    "buffer",
    "record",
    "config",
    "option",
    "marker",
    "fixture",
    "session",
    "report",
    "capture",
    "path",
    "node",
    "plugin",
    "hook",
    "result",
    "error",
    "value",
    "state",
    "queue",
    "timer",
    "retry",
    "limit",
]


def synthetic(root: Path, n_files: int = 250, per_file: int = 19) -> Path:
    """A package of ``n_files`` modules, each a class with methods and some functions: about
    ``n_files * (per_file + 1)`` entities with varied names, signatures and docstrings."""
    rng = random.Random(0)
    for n in range(n_files):
        words = rng.sample(_WORDS, 4)
        lines = [f'"""Module {n}: {" ".join(words)}."""\n\n', f"class {words[0].title()}{n}:\n"]
        lines.append(f'    """Keeps the {words[1]} of a {words[2]}."""\n\n')
        for k in range(per_file):
            a, b, c = rng.sample(_WORDS, 3)
            indent = "    " if k < per_file // 2 else ""
            self_arg = "self, " if indent else ""
            lines.append(f"{indent}def {a}_{b}_{k}({self_arg}{c}, limit=None):\n")
            lines.append(f'{indent}    """{a.title()} the {b} of every {c}."""\n')
            lines.append(f"{indent}    {c}_{a} = [{c}] if limit is None else {c}[:limit]\n")
            lines.append(f"{indent}    return {c}_{a}\n\n")
        path = root / "synth" / f"mod{n:03d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(lines), encoding="utf-8")
    (root / "synth" / "__init__.py").write_text('"""A synthetic package."""\n', encoding="utf-8")
    return root


# -- the child: one configuration, figures as JSON on stdout -------------------------------


def _peak_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(repo: Path, mode: str, pool: int) -> dict:
    from pytest_toolpolicy.paths import cache_dir
    from pytest_toolpolicy.primitives.codeindex import CodeIndex
    from pytest_toolpolicy.primitives.embedder import Embedder, load_embedder, model_dir
    from pytest_toolpolicy.primitives.search_code import CodeSearch
    from pytest_toolpolicy.primitives.search_symbol import SymbolSearch

    out: dict = {"mode": mode}
    old = mode == "old"
    t0 = time.perf_counter()
    index = CodeIndex(repo, cache=not old)
    out["index_s"] = time.perf_counter() - t0
    out["entities"] = len(index)
    if old:  # as search_code was: every entity, batches of 32, the graph folded at each load

        def load():
            return Embedder(model_dir(), cache_dir() / "embeddings.sqlite3", 32, fold=False)

        search = CodeSearch(index, load=load, pool=1 << 30)
    else:
        search = CodeSearch(index, load=load_embedder, pool=pool)
    searches = []
    for query in [QUERIES[0], QUERIES[0], *QUERIES[1:]]:
        t0 = time.perf_counter()
        data = search.search(query)["data"]
        searches.append(
            {
                "query": query,
                "s": time.perf_counter() - t0,
                "ranker": data["ranker"],
                "note": data["ranker_note"],
                "top": [m["selector"] for m in data["matches"]],
            }
        )
    out["searches"] = searches
    out["peak_mb"] = _peak_mb()
    symbols = SymbolSearch(index)
    rng = random.Random(0)
    entities = index.entities()
    queries = [e.name for e in rng.sample(entities, min(150, len(entities)))]
    queries += [e.selector.split(".", 1)[-1] for e in rng.sample(entities, min(50, len(entities)))]
    symbols.search("x")  # builds its tables: "once indexed"
    times = []
    for query in queries:
        t0 = time.perf_counter()
        symbols.search(query)
        times.append(time.perf_counter() - t0)
    times.sort()
    out["symbol_p50_ms"] = times[len(times) // 2] * 1000
    return out


# -- the parent ----------------------------------------------------------------------------


def run_child(repo: Path, mode: str, pool: int, cache: Path, search_s: float = 0) -> dict:
    env = {**os.environ, "TOOLPOLICY_CACHE_DIR": str(cache)}
    if search_s:
        env["TOOLPOLICY_LIMITS"] = f"search_s={search_s:g}"
    argv = [sys.executable, __file__, "--child", mode, "--repo", str(repo), "--pool", str(pool)]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    if proc.returncode:
        raise SystemExit(f"{mode} run failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.splitlines()[-1])


def run_cli(repo: Path, cache: Path) -> float:
    env = {**os.environ, "TOOLPOLICY_CACHE_DIR": str(cache)}
    request = json.dumps({"tool": "search_symbol", "args": {"query": "main"}})
    code = "import sys; from pytest_toolpolicy.cli import main; sys.exit(main())"
    argv = [sys.executable, "-c", code, "primitive", "--workspace", str(repo), request]
    t0 = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    if proc.returncode:
        raise SystemExit(f"toolpolicy primitive failed:\n{proc.stderr[-3000:]}")
    return time.perf_counter() - t0


def report(rows: dict[str, dict], cli: dict[str, float]) -> None:
    print(f"{'':34}" + "".join(f"{name:>14}" for name in rows))

    def line(label: str, value) -> None:
        print(f"{label:34}" + "".join(f"{value(r):>14}" for r in rows.values()))

    line("index (CodeIndex)", lambda r: f"{r['index_s']:.2f} s")
    line("first search_code", lambda r: f"{r['searches'][0]['s']:.2f} s")
    line("same query again", lambda r: f"{r['searches'][1]['s']:.3f} s")
    for n in range(2, len(QUERIES) + 1):
        line(f"another query ({n})", lambda r, n=n: f"{r['searches'][n]['s']:.2f} s")
    line("ranker", lambda r: r["searches"][0]["ranker"])
    line("peak RSS", lambda r: f"{r['peak_mb']:.0f} MB")
    line("search_symbol p50 (indexed)", lambda r: f"{r['symbol_p50_ms']:.2f} ms")
    for name, seconds in cli.items():
        print(f"{'CLI search_symbol, ' + name:34}{seconds:>14.2f} s")
    notes = {r["searches"][0]["note"] for r in rows.values()} - {None}
    for note in sorted(notes):
        print(f"note: {note}")
    if "old" in rows and "new" in rows:
        print("top matches, old (every entity embedded) vs new:")
        for old, new in zip(rows["old"]["searches"][1:], rows["new"]["searches"][1:], strict=True):
            same = len(set(old["top"]) & set(new["top"]))
            print(f"  {old['query']!r}: {same} of old's {len(old['top'])} also in new's")
            print(f"    old: {', '.join(old['top'][:3])}")
            print(f"    new: {', '.join(new['top'][:3])}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, default=os.environ.get("TOOLPOLICY_BENCH_REPO"))
    parser.add_argument("--pool", type=int, default=None, help="candidates embedded per query")
    parser.add_argument("--no-old", action="store_true", help="skip embedding every entity")
    parser.add_argument(
        "--old-search-s",
        type=float,
        default=3600,
        help="search_s for old (default 3600: time to embed every entity in the first call;"
        " with the default limit, 60, old ranks with bm25 until enough calls have embedded all)",
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    from pytest_toolpolicy.primitives.search_code import POOL

    pool = args.pool or POOL
    if args.child:
        print(json.dumps(child(Path(args.repo), args.child, pool)))
        return
    with tempfile.TemporaryDirectory(prefix="bench-real-repo-") as tmp:
        if args.repo:
            repo = Path(args.repo).resolve()
            print(f"repository: {repo}")
        else:
            repo = synthetic(Path(tmp) / "synthetic")
            print(
                f"repository: synthetic, generated in {repo} (no --repo and no"
                " TOOLPOLICY_BENCH_REPO given: figures of a real checkout need one)"
            )
        # The model is assembled (and folded) once beforehand, outside every measured process:
        # a machine does that once, not per repository.
        models = Path(tmp) / "models-cache"
        t0 = time.perf_counter()
        warm = (
            "from pytest_toolpolicy.primitives.embedder import load_embedder as l; l().embed(['x'])"
        )
        proc = subprocess.run(
            [sys.executable, "-c", warm],
            env={**os.environ, "TOOLPOLICY_CACHE_DIR": str(models)},
            check=False,
            capture_output=True,
            text=True,
        )
        model = models / "models" / "all-MiniLM-L6-v2-int8"
        if proc.returncode == 0 and model.is_dir():
            print(f"model assembled and folded once: {time.perf_counter() - t0:.1f} s")
            os.environ.setdefault("TOOLPOLICY_EMBED_MODEL_DIR", str(model))
        else:
            tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
            print(f"embedding model unavailable ({tail}): search_code ranks with bm25")
        rows: dict[str, dict] = {}
        new_cache = Path(tmp) / "cache-new"
        rows["new"] = run_child(repo, "new", pool, new_cache)
        print(f"entities: {rows['new']['entities']:,}; pool: {pool} candidates per query")
        rows["new, warm"] = run_child(repo, "new", pool, new_cache)
        if not args.no_old:
            print("old: embedding every entity (minutes on a real repository) ...", flush=True)
            old_cache = Path(tmp) / "cache-old"
            rows["old"] = run_child(repo, "old", pool, old_cache, args.old_search_s)
        cli_cache = Path(tmp) / "cache-cli"
        cli = {"cold": run_cli(repo, cli_cache), "warm": run_cli(repo, cli_cache)}
        report(rows, cli)


if __name__ == "__main__":
    main()
