"""The seeded sample: an equal share per repository unless told otherwise."""

from __future__ import annotations

from collections import Counter

import pytest

from pytest_toolpolicy.bench.sampling import describe, draw, quotas


def repos(**sizes: int) -> dict[str, str]:
    return {f"{repo}-{i:03d}": repo for repo, n in sizes.items() for i in range(n)}


def test_equal_shares_with_the_remainder_seeded() -> None:
    assert quotas({"a": 50, "b": 50, "c": 50}, 9, 0) == {"a": 3, "b": 3, "c": 3}
    shares = quotas({"a": 50, "b": 50, "c": 50}, 10, 0)
    assert sorted(shares.values()) == [3, 3, 4] and sum(shares.values()) == 10
    # Over seeds, the extra one goes to each repository in turn, not always the first.
    assert {max(quotas({"a": 9, "b": 9, "c": 9}, 4, s), key=quotas({"a": 9, "b": 9, "c": 9}, 4, s).get) for s in range(20)} == {"a", "b", "c"}  # fmt: skip


def test_a_small_repository_passes_its_shortfall_on() -> None:
    assert quotas({"big": 231, "tiny": 1, "mid": 8}, 20, 3) == {"big": 11, "mid": 8, "tiny": 1}
    assert quotas({"a": 2, "b": 3}, 99, 0) == {"a": 2, "b": 3}


def test_the_draw_is_stratified_seeded_and_not_mostly_one_project() -> None:
    ids = repos(django=231, sympy=75, flask=1, seaborn=2)
    sample = draw(ids, 20, seed=7)
    assert sample == sorted(sample) and len(set(sample)) == 20
    counts = Counter(ids[i] for i in sample)
    assert (counts["flask"], counts["seaborn"]) == (1, 2)  # all they have
    assert sorted((counts["django"], counts["sympy"])) == [8, 9]  # the rest, shared
    assert draw(ids, 20, seed=7) == sample and draw(ids, 20, seed=8) != sample
    plain = Counter(ids[i] for i in draw(ids, 20, seed=7, strata="none"))
    assert plain["django"] > plain["sympy"]  # the plain sample follows the population


def test_one_repository_draws_as_the_plain_sample() -> None:
    ids = repos(pytest=19)
    assert draw(ids, 5, seed=0) == draw(ids, 5, seed=0, strata="none")
    assert draw(ids, 50, seed=0) == sorted(ids)


def test_describe() -> None:
    ids = repos(a=3, b=1)
    assert describe(ids, sorted(ids)) == "2 repositories: a 3, b 1"
    assert describe(ids, ["b-000"]) == "1 repository: b 1"


@pytest.mark.parametrize("n", [1, 2, 5, 17])
def test_the_share_adds_up(n: int) -> None:
    assert sum(quotas({"a": 3, "b": 10, "c": 1}, n, 0).values()) == min(n, 14)
