"""What the installed plugin costs a pytest run that does not use it, measured side by side:
an unrelated one-test project, run with the plugin loaded ("on") and with ``-p no:toolpolicy``
("off"), N pairs, the order alternating pair by pair. Target: ≤ 50 ms and ≤ 5 MiB.

Prints, per arm, the median wall time, CPU time (user + system) and peak memory (max RSS), and
the cost of the plugin as the median of the N paired differences (with their interquartile
range) and as the ratio of the medians. On a shared machine one run's CPU time varies by a few
hundred ms, so a difference of two medians of a handful of runs is mostly noise: read the paired
median with its IQR, and ``--instructions`` for a figure that load does not move.

Scenarios (``--scenario``):

- ``installed``: the package as the environment installs it (here: editable), the project in a
  temporary directory: pytest finds no file of the package to mark for assertion rewriting;
- ``on-path``: the repository root on ``PYTHONPATH``, as a wheel install or a checkout is seen:
  pytest marks the plugin's package for rewriting, so each module the plugin imports at load is
  parsed, rewritten and compiled from source, and every run pays it again when the rewritten
  ``.pyc`` cannot be cached (``PYTHONDONTWRITEBYTECODE``, a read-only ``site-packages``).

Bytecode (``--bytecode``): ``cached`` (default) writes every ``.pyc`` under a temporary
``PYTHONPYCACHEPREFIX`` in the warm-up runs, so that both arms load compiled modules, as a user's
second run does; ``off`` sets ``PYTHONDONTWRITEBYTECODE=1``, so a module without a valid ``.pyc``
(and any module pytest rewrites) is compiled from source on every run.

``--instructions`` adds one pair per case under ``valgrind --tool=callgrind``: instructions
executed, a count the machine's load does not change, and its cost in ms at the CPU rate of the
timed "off" runs. ``--tree DIR`` measures the package of another tree (``DIR/pytest_toolpolicy``,
e.g. a ``git worktree`` of an older commit) in place of this one, for before/after figures.

    .venv/bin/python benchmarks/bench_plugin_load.py [--pairs 25] [--scenario all]
        [--bytecode cached|off|all] [--instructions] [--tree DIR]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BASE = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
OFF = ["-p", "no:toolpolicy"]
TARGET_MS, TARGET_MIB = 50.0, 5.0
FIELDS = ("wall", "cpu", "rss")
# Run in the child after the test run: which of the package's modules loading the plugin
# imported, and whether pytest's assertion rewriter loaded them.
PROBE = (
    "import sys, pytest; pytest.main(['-q', '-p', 'no:cacheprovider']);"
    "mods = sorted(m for m in sys.modules if m.split('.')[0] == 'pytest_toolpolicy');"
    "print('PROBE', len(mods), sum(type(sys.modules[m].__loader__).__name__"
    " == 'AssertionRewritingHook' for m in mods), sys.modules['pytest_toolpolicy'].__path__[0],"
    " ','.join(mods))"
)
# ``--tree`` without the tree on sys.path: a finder, as an editable install's, that pytest's
# marking of plugins for rewriting (a PathFinder search of sys.path) does not see.
TREE_FINDER = """import importlib.util, sys
class _Tree:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name != "pytest_toolpolicy":
            return None
        return importlib.util.spec_from_file_location(
            name, {root!r} + "/__init__.py", submodule_search_locations=[{root!r}])
sys.meta_path.insert(0, _Tree)
"""


@dataclass(frozen=True)
class Run:
    wall: float  # seconds
    cpu: float  # seconds, user + system
    rss: float  # MiB


def case_env(scenario: str, bytecode: str, tree: Path | None, scratch: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPYCACHEPREFIX", None)
    if bytecode == "off":
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(scratch / "pycache")
    path: str | None = None
    if scenario == "on-path":
        path = str(tree or REPO)
    elif tree is not None:
        site = scratch / "site"
        site.mkdir(exist_ok=True)
        root = str(tree / "pytest_toolpolicy")
        (site / "sitecustomize.py").write_text(TREE_FINDER.format(root=root))
        path = str(site)
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (path, env.get("PYTHONPATH")) if p)
    return env


def run_once(project: Path, plugin: bool, env: dict[str, str]) -> Run:
    argv = BASE if plugin else BASE + OFF
    started = time.perf_counter()
    child = subprocess.Popen(argv, cwd=project, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    if status != 0:
        raise SystemExit(f"pytest failed in {project} (status {status})")
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)  # Linux: KiB


def probe(project: Path, env: dict[str, str]) -> str:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=project, env=env, capture_output=True, text=True
    ).stdout
    line = next((x for x in out.splitlines() if x.startswith("PROBE ")), "PROBE ? ? ?")
    count, rewritten, where, names = line.split(" ", 4)[1:]
    return (
        f"loading the plugin imports {count} of its modules, {rewritten} rewritten by pytest"
        f" ({names}; from {where})"
    )


def instructions(project: Path, plugin: bool, env: dict[str, str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        argv = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/out"]
        argv += BASE if plugin else BASE + OFF
        env = {**env, "PYTHONHASHSEED": "0"}
        done = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True)
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    if found is None:
        raise SystemExit(f"callgrind gave no count:\n{done.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def quartiles(values: list[float]) -> tuple[float, float, float]:
    q1, q2, q3 = statistics.quantiles(values, n=4) if len(values) > 1 else values * 3
    return q1, q2, q3


def report(case: str, on: list[Run], off: list[Run]) -> None:
    print(f"[{case}] {len(on)} pairs, one unrelated test")
    print(f"  {'':22}{'wall ms':>10}{'CPU ms':>10}{'peak RSS MiB':>14}")
    for name, rows in (("plugin loaded", on), ("-p no:toolpolicy", off)):
        wall, cpu, rss = (statistics.median(getattr(r, f) for r in rows) for f in FIELDS)
        print(f"  {name:22}{wall * 1e3:10.1f}{cpu * 1e3:10.1f}{rss:14.1f}")
    for label, field, scale, unit in (
        ("wall", "wall", 1e3, "ms"),
        ("CPU", "cpu", 1e3, "ms"),
        ("peak RSS", "rss", 1.0, "MiB"),
    ):
        diffs = [
            (getattr(a, field) - getattr(b, field)) * scale for a, b in zip(on, off, strict=True)
        ]
        q1, med, q3 = quartiles(diffs)
        ratio = statistics.median(getattr(r, field) for r in on) / statistics.median(
            getattr(r, field) for r in off
        )
        print(
            f"  cost, {label:9} paired median {med:+8.1f} {unit:3} (IQR {q1:+.1f} .. {q3:+.1f}),"
            f" ratio of medians {ratio:.3f}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pairs", type=int, default=25)
    parser.add_argument("--scenario", choices=("installed", "on-path", "all"), default="all")
    parser.add_argument("--bytecode", choices=("cached", "off", "all"), default="cached")
    parser.add_argument("--instructions", action="store_true", help="add a callgrind pair")
    parser.add_argument("--tree", type=Path, help="measure DIR/pytest_toolpolicy instead")
    args = parser.parse_args()
    if args.instructions and shutil.which("valgrind") is None:
        parser.error("--instructions needs valgrind")
    tree = args.tree.resolve() if args.tree else None
    if tree is not None and not (tree / "pytest_toolpolicy" / "plugin.py").is_file():
        parser.error(f"--tree: no pytest_toolpolicy/plugin.py under {tree}")
    scenarios = ("installed", "on-path") if args.scenario == "all" else (args.scenario,)
    bytecodes = ("cached", "off") if args.bytecode == "all" else (args.bytecode,)
    print(
        f"python {sys.version.split()[0]}, package {tree or REPO}, target ≤ {TARGET_MS:.0f} ms"
        f" and ≤ {TARGET_MIB:.0f} MiB"
    )
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        (project / "test_one.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
        for scenario in scenarios:
            for bytecode in bytecodes:
                case = f"{scenario}, bytecode {bytecode}"
                with tempfile.TemporaryDirectory() as scratch:
                    env = case_env(scenario, bytecode, tree, Path(scratch))
                    measure(case, project, env, args.pairs, args.instructions)
    return 0


def measure(case: str, project: Path, env: dict[str, str], pairs: int, count: bool) -> None:
    print(f"\n[{case}] {probe(project, env)}")
    for plugin in (True, False, True, False):  # the file cache, and .pyc files for both
        run_once(project, plugin, env)
    on: list[Run] = []
    off: list[Run] = []
    for pair in range(pairs):
        for plugin in (True, False) if pair % 2 == 0 else (False, True):
            (on if plugin else off).append(run_once(project, plugin, env))
    report(case, on, off)
    if count:
        count_on, count_off = (instructions(project, p, env) for p in (True, False))
        rate = statistics.median(r.cpu for r in off) / count_off  # s per instruction
        extra = count_on - count_off
        print(
            f"  instructions (callgrind): on {count_on:,} off {count_off:,}:"
            f" {extra:+,} ({extra / count_off:+.2%}), ≈ {extra * rate * 1e3:+.1f} ms"
            " of CPU at the timed runs' rate"
        )


if __name__ == "__main__":
    sys.exit(main())
