"""Paired statistics reported beside the §9 rules; they inform a reader and never change a verdict.

Both tests are exact or seeded, so a report regenerated from the same results is identical.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar test on the discordant pairs ``b`` and ``c``.

    p = min(1, 2·P(X ≤ min(b, c))) with X ~ Bin(b + c, 1/2); with no discordant pair there is no
    evidence either way, so p = 1.
    """
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be non-negative, got b={b}, c={c}")
    n = b + c
    if n == 0:
        return 1.0
    # Integer arithmetic up to the one division keeps small-sample p-values exact (e.g. 1/16).
    tail = sum(math.comb(n, k) for k in range(min(b, c) + 1))
    return min(1.0, 2 * tail / 2**n)


def paired_bootstrap(
    x: npt.ArrayLike,
    y: npt.ArrayLike,
    n: int = 2000,
    seed: int = 0,
    clusters: npt.ArrayLike | None = None,
) -> tuple[float, float]:
    """95% percentile interval of mean(x − y), resampling pairs with replacement; with
    ``clusters`` (a label per pair: its repository, or its instance when trials repeat it),
    whole clusters are resampled, so pairs that share a cluster are not taken as independent.

    ``x[i]`` and ``y[i]`` must belong to the same pair. Any NaN (an unpriced run) makes the
    interval unknown rather than silently dropping that pair from one side.
    """
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xs.shape != ys.shape:
        raise ValueError(f"paired samples differ in length: {xs.shape[0]} vs {ys.shape[0]}")
    if xs.size == 0 or np.isnan(xs).any() or np.isnan(ys).any():
        return (math.nan, math.nan)
    deltas = xs - ys
    rng = np.random.default_rng(seed)
    if clusters is None:
        picks = rng.integers(0, deltas.size, size=(n, deltas.size))
        means = deltas[picks].mean(axis=1)
    else:
        labels = np.asarray(clusters)
        if labels.shape != deltas.shape:
            raise ValueError(f"{labels.shape[0]} cluster labels for {deltas.size} pairs")
        _, index = np.unique(labels, return_inverse=True)
        sums = np.bincount(index, weights=deltas)
        sizes = np.bincount(index).astype(float)
        picks = rng.integers(0, sums.size, size=(n, sums.size))
        # The mean over the pairs of the clusters drawn (a ratio estimator, as clusters differ
        # in size).
        means = sums[picks].sum(axis=1) / sizes[picks].sum(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return (float(low), float(high))
