"""Environment builds on real SWE-bench rows, side by side in one run: a cold build, a second
version of the same repository after it, the cached start of an instance, and uv against pip
on one spec's pinned packages. Prints figures; not a test. Needs the package index (PyPI) and
local mirrors.

    .venv/bin/python benchmarks/bench_env_build.py --dataset ROWS.jsonl --repos MIRRORS \
        [--first ID --second ID --third ID] [--compare ID]

- cold: ``build_environment`` for ``--first`` into an empty cache directory (its checkout, venv,
  dependency installs and the install of the repository; uv's shared cache empty);
- second version: ``--second`` (the same repository, another version) in the same cache, so
  its dependency steps reuse what the first downloaded and built — the ratio cold/second;
- cached start: for ``--third`` (a row whose environment is the first's), a fresh process's
  ``environment_for`` plus its workspace (``materialize``), which is what an item pays before
  its agent starts; and ``--first`` again, which finds everything built;
- uv vs pip: ``--compare``'s spec's pinned packages into a fresh venv, with ``pip install`` (a
  ``python -m venv``, empty pip cache) and ``uv pip install`` (``uv venv --seed``, empty uv
  cache), then both again with their caches warm.
Targets (issue 29): cached start <= 5 s; a second version >= 2x faster than the first.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULTS = {
    "first": "sympy__sympy-20154",  # sympy 1.7
    "second": "sympy__sympy-20801",  # sympy 1.8
    "third": "sympy__sympy-19495",  # sympy 1.7 again, another base commit
    "compare": "astropy__astropy-13236",  # astropy 5.0: 25 pins, numpy among them
}


def _mib(path: Path) -> float:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_size
    return total / 2**20


def _instance(dataset: str, instance_id: str):  # type: ignore[no-untyped-def]
    from pytest_toolpolicy.bench.load import load_instances

    found = load_instances(dataset, ids=[instance_id]).instances
    if not found:
        sys.exit(f"{instance_id} is not in {dataset}")
    return found[0]


def _build(dataset: str, repos: Path, cache: Path, instance_id: str) -> tuple[float, str, str]:
    from pytest_toolpolicy.envs.cache import build_environment

    instance = _instance(dataset, instance_id)
    start = time.perf_counter()
    build = build_environment(instance, repos=repos, cache_dir=cache)
    seconds = time.perf_counter() - start
    return seconds, build.status, build.reason or build.name


_START = """
import sys, tempfile, time
from pathlib import Path
t0 = time.perf_counter()
from pytest_toolpolicy.bench.load import load_instances
from pytest_toolpolicy.envs.cache import environment_for
from pytest_toolpolicy.bench.workspaces import materialize
instance = load_instances(sys.argv[1], ids=[sys.argv[3]]).instances[0]
t1 = time.perf_counter()
env = environment_for(instance, repos=Path(sys.argv[2]), cache_dir=Path(sys.argv[4]))
t2 = time.perf_counter()
with tempfile.TemporaryDirectory() as tmp:
    ws = materialize(instance, Path(tmp), repos=Path(sys.argv[2]), cache_dir=Path(sys.argv[4]))
    env.seed(ws.root)
    t3 = time.perf_counter()
print(f"{t1 - t0:.2f} {t2 - t1:.2f} {t3 - t2:.2f}")
"""


def _cached_start(dataset: str, repos: Path, cache: Path, instance_id: str) -> str:
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", _START, dataset, str(repos), instance_id, str(cache)],
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - start
    if out.returncode:
        return f"failed: {out.stderr.strip().splitlines()[-1:]}"
    load, env, ws = out.stdout.split()
    return f"{wall:.2f} s wall (load {load} s, environment {env} s, workspace {ws} s)"


def _timed(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return time.perf_counter() - start


def _uv_vs_pip(dataset: str, instance_id: str, tmp: Path) -> None:
    from pytest_toolpolicy.envs.interpreters import find_python
    from pytest_toolpolicy.envs.pipsettings import build_environ
    from pytest_toolpolicy.envs.spec import spec_for
    from pytest_toolpolicy.envs.venvs import uv_binary

    instance = _instance(dataset, instance_id)
    spec = spec_for(instance.repo, instance.version)
    python = find_python(spec.python, repo=instance.repo, repo_version=instance.version)
    pins = tmp / "pins.txt"
    pins.write_text("".join(f"{p}\n" for p in spec.pip_packages))
    env = {**os.environ, **build_environ()}
    env.update(PIP_CACHE_DIR=str(tmp / "pip-cache"), UV_CACHE_DIR=str(tmp / "uv-cache"))
    print(
        f"uv vs pip: {len(spec.pip_packages)} pinned packages of {spec.describe()}, "
        f"Python {spec.python}"
    )
    for rnd in ("empty cache", "warm cache"):
        pv, uvv = tmp / f"pip-{rnd[:4]}", tmp / f"uv-{rnd[:4]}"
        pip_s = _timed([python, "-m", "venv", str(pv)], env)
        pip_s += _timed(
            [str(pv / "bin/python"), "-m", "pip", "install", "-q", "-r", str(pins)], env
        )
        uv_s = _timed([uv_binary(), "venv", "-q", "--seed", "--python", python, str(uvv)], env)
        uv_s += _timed(
            [
                uv_binary(),
                "pip",
                "install",
                "-q",
                "--python",
                str(uvv / "bin/python"),
                "-r",
                str(pins),
            ],
            env,
        )
        print(f"  {rnd:11}  pip {pip_s:6.1f} s   uv {uv_s:6.1f} s   pip/uv {pip_s / uv_s:5.1f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default=os.environ.get("SWEBENCH"))
    ap.add_argument("--repos", default=os.environ.get("MIRRORS"), type=Path)
    for key, value in DEFAULTS.items():
        ap.add_argument(f"--{key}", default=value)
    ap.add_argument("--no-compare", action="store_true", help="skip uv vs pip")
    ns = ap.parse_args()
    if not ns.dataset or not ns.repos:
        # `make bench` runs every script: this one needs real rows and mirrors to say anything.
        print("bench_env_build: needs --dataset and --repos (or SWEBENCH, MIRRORS); skipped")
        return
    with tempfile.TemporaryDirectory(prefix="bench-env-") as tmp_dir:
        tmp = Path(tmp_dir)
        cache = tmp / "cache"
        print(f"cache: {cache} (empty at start)")
        first = _build(ns.dataset, ns.repos, cache, ns.first)
        print(f"cold build       {ns.first}: {first[0]:6.1f} s  {first[1]}  {first[2]}")
        second = _build(ns.dataset, ns.repos, cache, ns.second)
        print(f"second version   {ns.second}: {second[0]:6.1f} s  {second[1]}  {second[2]}")
        print(f"  first/second: {first[0] / second[0]:.1f}x (target >= 2x)")
        print(f"  cache on disk: {_mib(cache):.0f} MiB")
        print(
            f"cached start     {ns.third}: {_cached_start(ns.dataset, ns.repos, cache, ns.third)}"
        )
        print(
            f"cached start     {ns.first}: {_cached_start(ns.dataset, ns.repos, cache, ns.first)}"
        )
        print("  (target <= 5 s)")
        if not ns.no_compare:
            _uv_vs_pip(ns.dataset, ns.compare, tmp)


if __name__ == "__main__":
    main()
