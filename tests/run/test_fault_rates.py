"""The default profile's fault rates, end to end over the whole bundled benchmark."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_toolpolicy.bench import load_instances
from pytest_toolpolicy.models.sim.profile import default_profile
from pytest_toolpolicy.run.fault_rates import measure

INSTANCES = load_instances("bundled").instances
# Seeds 0..N-1. The sparsest classes bound N: guess (10 opportunities a seed: 5 under-specified
# instances x 2 arms) and blind_wrong (~15 a seed: only a blind edit offers it). Seeds 0..3 give
# every class >= 40 opportunities, but ±30% is then about 1.4 standard errors (the arms share
# draws, see below) and wrong_patch comes out at 1.35x; with 0..9 every class is in range.
SEEDS = range(10)
MIN_CHANCES = 100

# About 2 minutes of CPU (211 s on one core beside a parallel suite, so run on two): 500 fresh
# workspaces and the distinct sandboxed test runs (the rest are served by the execution memo).
# Worth it: it is the end-to-end check of the profile, so it runs in `make test-slow` (CI).
pytestmark = pytest.mark.slow


def test_default_profile_fault_rates_over_the_bundled_benchmark(tmp_path: Path) -> None:
    """Every bundled instance in both arms for each seed: each fault class occurs within ±30% of
    its configured rate. Opportunities are not all independent: a decision is drawn from
    (seed, instance, decision), so the two arms of one instance share it, which is what pairs
    the A/B arms; the effective sample is about half the count. Test runs are memoized on the
    workspace tree (``run/fault_rates.py``); ``benchmarks/bench_sim_faults.py`` prints the same table."""
    rates = measure(INSTANCES, SEEDS, tmp_path, jobs=2)
    profile = default_profile()
    for name, configured in profile.rates().items():
        hits, chances = rates.get(name, (0, 0))
        assert chances >= MIN_CHANCES, (name, chances)
        assert abs(hits / chances - configured) <= 0.3 * configured, (name, hits, chances)


def test_seeds_in_processes_count_as_seeds_in_turn(tmp_path: Path) -> None:
    """The processes share nothing but the memo's file: the same seeds give the same counts, and
    every trajectory still reaches ``on_run`` in the caller."""
    one = [i for i in INSTANCES if i.underspecified][:1] + [
        i for i in INSTANCES if not i.underspecified
    ][:1]
    seen: list[list[str]] = [[], []]
    serial = measure(
        one,
        [0, 1],
        tmp_path / "a",
        arms=("policy",),
        on_run=lambda t: seen[0].append(t.instance_id),
    )
    parallel = measure(
        one,
        [0, 1],
        tmp_path / "b",
        arms=("policy",),
        jobs=2,
        on_run=lambda t: seen[1].append(t.instance_id),
    )
    assert serial == parallel
    assert sum(chances for _, chances in serial.values()) > 0
    assert sorted(seen[0]) == sorted(seen[1]) and len(seen[0]) == 4
