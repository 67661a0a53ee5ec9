"""What the installed plugin costs a pytest run that does not use it, measured side by side:
an unrelated one-test project, run with the plugin loaded and with ``-p no:toolpolicy``,
alternating, N pairs. Prints median wall time and median peak memory (max RSS) of each, and
the differences (target: ≤ 50 ms and ≤ 5 MiB).

    .venv/bin/python benchmarks/bench_plugin_load.py [--pairs 9]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run_once(project: Path, plugin: bool) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS MiB) of one ``pytest -q`` in ``project``. CPU time
    is the steadier figure on a shared machine: wall time varies by hundreds of ms run to run."""
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    if not plugin:
        argv += ["-p", "no:toolpolicy"]
    started = time.perf_counter()
    child = subprocess.Popen(argv, cwd=project, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    if status != 0:
        raise SystemExit(f"pytest failed in {project} (status {status})")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024  # Linux: KiB


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        (project / "test_one.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
        on: list[tuple[float, float, float]] = []
        off: list[tuple[float, float, float]] = []
        run_once(project, True)  # warm the file cache and .pyc files for both
        for pair in range(args.pairs):
            order = (True, False) if pair % 2 == 0 else (False, True)
            for plugin in order:
                (on if plugin else off).append(run_once(project, plugin))
    wall_on, wall_off = (statistics.median(r[0] for r in rows) for rows in (on, off))
    cpu_on, cpu_off = (statistics.median(r[1] for r in rows) for rows in (on, off))
    rss_on, rss_off = (statistics.median(r[2] for r in rows) for rows in (on, off))
    print(f"{args.pairs} pairs, one unrelated test, medians (wall, CPU, peak RSS):")
    print(f"  plugin loaded:     {wall_on * 1e3:7.1f} ms {cpu_on * 1e3:7.1f} ms {rss_on:6.1f} MiB")
    print(
        f"  -p no:toolpolicy:  {wall_off * 1e3:7.1f} ms {cpu_off * 1e3:7.1f} ms {rss_off:6.1f} MiB"
    )
    print(
        f"  cost of the plugin: {(wall_on - wall_off) * 1e3:+6.1f} ms {(cpu_on - cpu_off) * 1e3:+7.1f} ms"
        f" {rss_on - rss_off:+6.1f} MiB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
