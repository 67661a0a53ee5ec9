"""A sim profile's fault rates measured end to end: every instance in both arms, for each seed.

Each run goes through the A/B's own pipeline (``pipeline.run_instance``: a fresh workspace with
the FAIL_TO_PASS tests visible, the simulator's tool-layer faults outside the execution memo)
but is not graded: a fault rate depends only on the trajectory. Across seeds the same workspace states
are tested again and again, so the runs share one execution memo (exact: keyed by tree hash).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable, Sequence
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
) -> Rates:
    """Fault class → (occurrences, opportunities), summed over the seeds; one model per seed,
    so each seed's decision log counts every opportunity once. ``on_run`` sees each trajectory."""
    memo = memo or ExecutionMemo(None)
    setup = RunSetup(sandbox=Sandbox.from_env(), memo=memo, graded=False)
    by_id = {i.instance_id: i for i in instances}
    total: Rates = {}
    for seed in seeds:
        model = build_model(spec, instances=by_id, seed=seed)
        if not isinstance(model, SimModel):
            raise ValueError(f"{spec!r} is not a sim model")
        for n, instance in enumerate(instances):
            for arm in arms:
                run = workdir / f"s{seed}-{arm}-{n}"
                trajectory = run_instance(instance, arm, model, run, setup=setup).trajectory
                if on_run is not None:
                    on_run(trajectory)
                shutil.rmtree(run, ignore_errors=True)
        for name, (hits, chances) in model.log.rates().items():
            was = total.get(name, (0, 0))
            total[name] = (was[0] + hits, was[1] + chances)
    return total
