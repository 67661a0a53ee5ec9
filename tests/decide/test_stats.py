import math

import pytest

from pytest_toolpolicy.decide.stats import mcnemar_exact, paired_bootstrap


@pytest.mark.parametrize(
    ("b", "c", "p"),
    [(0, 5, 0.0625), (5, 0, 0.0625), (3, 3, 1.0), (1, 9, 0.021484375), (0, 0, 1.0), (0, 1, 1.0)],
)
def test_mcnemar_exact_known_values(b: int, c: int, p: float) -> None:
    assert mcnemar_exact(b, c) == p


def test_mcnemar_exact_is_capped_at_one_and_rejects_negative_counts() -> None:
    assert mcnemar_exact(4, 5) == 1.0
    with pytest.raises(ValueError, match="non-negative"):
        mcnemar_exact(-1, 2)


def test_bootstrap_is_deterministic_for_a_seed() -> None:
    x = [0.3, 0.1, 0.7, 0.2, 0.9, 0.4]
    y = [0.2, 0.2, 0.5, 0.1, 0.4, 0.4]
    assert paired_bootstrap(x, y, seed=7) == paired_bootstrap(x, y, seed=7)
    assert paired_bootstrap(x, y, seed=7) != paired_bootstrap(x, y, seed=8)


def test_bootstrap_of_a_constant_shift_is_the_shift() -> None:
    y = [1.0, 4.0, 2.5, 8.0, 3.0]
    low, high = paired_bootstrap([v + 0.25 for v in y], y)
    assert low == pytest.approx(0.25) and high == pytest.approx(0.25)


def test_bootstrap_interval_contains_the_true_mean_delta_under_noise() -> None:
    # Symmetric zero-mean noise around a shift of 2: the mean delta is exactly 2.
    y = [float(i) for i in range(40)]
    x = [v + 2 + (0.5 if i % 2 else -0.5) for i, v in enumerate(y)]
    low, high = paired_bootstrap(x, y, n=2000, seed=3)
    assert low < 2 < high
    assert high - low < 1


def test_bootstrap_pairs_by_position_not_by_sorting() -> None:
    # Unpaired, the means differ by 0; paired, every instance gains exactly 1.
    low, high = paired_bootstrap([2.0, 11.0, 6.0], [1.0, 10.0, 5.0])
    assert low == pytest.approx(1.0) and high == pytest.approx(1.0)


def test_bootstrap_with_nan_or_nothing_is_unknown() -> None:
    assert all(math.isnan(v) for v in paired_bootstrap([1.0, math.nan], [1.0, 2.0]))
    assert all(math.isnan(v) for v in paired_bootstrap([], []))
    with pytest.raises(ValueError, match="differ in length"):
        paired_bootstrap([1.0], [1.0, 2.0])


def test_a_clustered_interval_resamples_whole_clusters() -> None:
    # Two repositories: every pair of the first gains 1, every pair of the second gains 0. Pairs
    # resampled one by one see 40 independent draws; clusters see two, so the clustered
    # interval spans what two repositories can say: anything from 0 to 1.
    deltas_x = [1.0] * 20 + [0.0] * 20
    y = [0.0] * 40
    clusters = ["a/one"] * 20 + ["b/two"] * 20
    pairs = paired_bootstrap(deltas_x, y, seed=1)
    clustered = paired_bootstrap(deltas_x, y, seed=1, clusters=clusters)
    assert pairs[1] - pairs[0] < 0.4
    assert clustered == (0.0, 1.0)


def test_clusters_of_unequal_size_weigh_by_their_pairs() -> None:
    # One cluster, one shift: the interval is the shift, whatever the cluster sizes.
    low, high = paired_bootstrap([3.0, 3.0, 3.0], [1.0, 1.0, 1.0], clusters=["x", "x", "x"])
    assert (low, high) == (2.0, 2.0)
    with pytest.raises(ValueError, match="cluster labels"):
        paired_bootstrap([1.0, 2.0], [0.0, 0.0], clusters=["x"])
