"""What the trust boundary's host-side checks cost per tool call, side by side in one run.

On a bundled instance's workspace, each check is timed next to what it guards, interleaved so
that drift in machine load hits both alike (medians of --runs):
- a snapshot through hostgit (scrubbed env, -c overrides, pinned config) vs plain
  ``git add -A && git write-tree`` with the harness's environment;
- the index refresh and the disk measure a sandboxed run now costs vs that run (``run_test``);
- a no-follow, bounded read (safefs) vs ``Path.read_bytes``;
- jsonsafe.dumps vs json.dumps of a trajectory.

    .venv/bin/python benchmarks/bench_trust_boundary.py [--runs 15]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pytest_toolpolicy import jsonsafe
from pytest_toolpolicy.bench import load_instances
from pytest_toolpolicy.bench.workspaces import materialize
from pytest_toolpolicy.primitives import Toolbox, safefs
from pytest_toolpolicy.primitives.diskwatch import tree_bytes
from pytest_toolpolicy.primitives.sandbox import Sandbox

INSTANCE = "bundled__memstore-1"


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def plain_snapshot(root: Path) -> None:
    """The old way: the harness's whole environment, the workspace's config in force."""
    env = {**os.environ, "GIT_INDEX_FILE": str(root / ".git" / "bench-index")}
    subprocess.run(["git", "add", "-A", "."], cwd=root, env=env, check=True)
    subprocess.run(["git", "write-tree"], cwd=root, env=env, check=True, capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    (instance,) = load_instances("bundled", ids=[INSTANCE]).instances
    with tempfile.TemporaryDirectory() as tmp:
        workspace = materialize(instance, Path(tmp))
        root = workspace.root
        box = Toolbox(root, sandbox=Sandbox.select("auto"), workspace=workspace)
        target = instance.FAIL_TO_PASS[0]
        rel = "memstore/__init__.py"
        trajectory = {"turns": [{"prompt": (root / rel).read_text()} for _ in range(30)]}
        pairs: dict[str, tuple[list[float], list[float]]] = {
            "snapshot: hostgit vs plain git": ([], []),
            "refresh + disk measure vs run_test": ([], []),
            "read: safefs vs Path.read_bytes": ([], []),
            "jsonsafe.dumps vs json.dumps": ([], []),
        }
        for _ in range(runs):
            new, old = pairs["snapshot: hostgit vs plain git"]
            new.append(timed(workspace.tree_hash))
            old.append(timed(lambda: plain_snapshot(root)))
            new, old = pairs["refresh + disk measure vs run_test"]
            new.append(timed(lambda: (box.index.refresh(), tree_bytes(root))))
            old.append(timed(lambda: box.call("run_test", {"target": target})))
            new, old = pairs["read: safefs vs Path.read_bytes"]
            new.append(timed(lambda: safefs.read_bytes(root, rel, 1 << 24)))
            old.append(timed(lambda: (root / rel).read_bytes()))
            new, old = pairs["jsonsafe.dumps vs json.dumps"]
            new.append(timed(lambda: jsonsafe.dumps(trajectory)))
            old.append(timed(lambda: json.dumps(trajectory, ensure_ascii=False)))
    print(f"{INSTANCE}, medians of {runs} interleaved runs")
    for name, (new, old) in pairs.items():
        a, b = statistics.median(new), statistics.median(old)
        print(f"  {name:38} {a * 1e3:9.3f} ms vs {b * 1e3:9.3f} ms  = {a / b:6.3f}x")


if __name__ == "__main__":
    main()
