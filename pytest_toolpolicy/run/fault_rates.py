"""A sim profile's fault rates measured end to end: every instance in both arms, for each seed.

Each run goes through the A/B's own pipeline (``pipeline.run_instance``: a fresh workspace with
the FAIL_TO_PASS tests visible, the simulator's tool-layer faults outside the execution memo)
but is not graded: a fault rate depends only on the trajectory. Across seeds the same workspace
states are tested again and again, so the runs share one execution memo (exact: keyed by tree
hash). Seeds are independent, so ``jobs`` processes take them in turn, sharing the memo's file.
"""

from __future__ import annotations

import multiprocessing
import shutil
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path

from ..bench.instance import Instance
from ..models.sim.model import SimModel
from ..models.spec import build_model
from ..primitives.sandbox import Sandbox
from ..types import Trajectory
from .arms import ARMS
from .memo import ExecutionMemo
from .pipeline import RunSetup, run_instance

Rates = dict[str, tuple[int, int]]


def measure(
    instances: Sequence[Instance],
    seeds: Iterable[int],
    workdir: Path,
    *,
    spec: str = "sim",
    arms: Sequence[str] = ARMS,
    memo: ExecutionMemo | None = None,
    on_run: Callable[[Trajectory], object] | None = None,
    jobs: int = 1,
) -> Rates:
    """Fault class → (occurrences, opportunities), summed over the seeds; one model per seed,
    so each seed's decision log counts every opportunity once. ``on_run`` sees each trajectory
    (in the calling process, seed by seed). ``jobs`` > 1 runs seeds in that many processes,
    sharing one memo file in ``workdir`` (``memo`` is then not used)."""
    seeds = list(seeds)
    if jobs > 1 and len(seeds) > 1:
        shared = workdir / "memo.sqlite"
        one = partial(_seed, instances, workdir, spec, arms, shared, on_run is not None)
        # fork: the children inherit the loaded instances and the warm imports.
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(min(jobs, len(seeds)), mp_context=context) as pool:
            results = list(pool.map(one, seeds))
    else:
        memo = memo or ExecutionMemo(None)
        results = [
            (_run_seed(instances, workdir, spec, arms, memo, seed, on_run), []) for seed in seeds
        ]
    total: Rates = {}
    for rates, trajectories in results:
        for trajectory in trajectories:
            if on_run is not None:
                on_run(trajectory)
        for name, (hits, chances) in rates.items():
            was = total.get(name, (0, 0))
            total[name] = (was[0] + hits, was[1] + chances)
    return total


def _seed(
    instances: Sequence[Instance],
    workdir: Path,
    spec: str,
    arms: Sequence[str],
    memo_file: Path,
    keep: bool,
    seed: int,
) -> tuple[Rates, list[Trajectory]]:
    memo = ExecutionMemo(memo_file)
    kept: list[Trajectory] = []
    try:
        rates = _run_seed(instances, workdir, spec, arms, memo, seed, kept.append if keep else None)
    finally:
        memo.close()
    return rates, kept


def _run_seed(
    instances: Sequence[Instance],
    workdir: Path,
    spec: str,
    arms: Sequence[str],
    memo: ExecutionMemo,
    seed: int,
    on_run: Callable[[Trajectory], object] | None,
) -> Rates:
    """One seed's rates; ``on_run`` sees each trajectory."""
    setup = RunSetup(sandbox=Sandbox.from_env(), memo=memo, graded=False)
    model = build_model(spec, instances={i.instance_id: i for i in instances}, seed=seed)
    if not isinstance(model, SimModel):
        raise ValueError(f"{spec!r} is not a sim model")
    for n, instance in enumerate(instances):
        for arm in arms:
            run = workdir / f"s{seed}-{arm}-{n}"
            trajectory = run_instance(instance, arm, model, run, setup=setup).trajectory
            if on_run is not None:
                on_run(trajectory)
            shutil.rmtree(run, ignore_errors=True)
    return model.log.rates()
