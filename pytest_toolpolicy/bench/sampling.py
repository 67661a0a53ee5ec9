"""A seeded sample of instances, stratified by repository unless told otherwise.

SWE-bench Verified is 46% django; what a machine can run of it may be mostly one project. A
simple random sample then speaks for that project alone, so the default draw gives every
repository an equal share (``quotas``): ``n // k`` each, the remainder to repositories in a
seeded order, and what a small repository cannot fill passed on to the others. Within a
repository the members are a seeded random sample. The same (ids, n, seed) always draw the
same sample; ``simple`` is the plain random sample over all ids.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Literal

Strata = Literal["repo", "none"]
STRATA: tuple[Strata, ...] = ("repo", "none")


def quotas(sizes: Mapping[str, int], n: int, seed: int) -> dict[str, int]:
    """How many of ``n`` each stratum gives, none more than it has: equal shares, the
    remainder to strata in a seeded order, a small stratum's shortfall to the rest."""
    order = sorted(sizes)
    random.Random(f"{seed}:order").shuffle(order)
    taken = dict.fromkeys(order, 0)
    left = min(n, sum(sizes.values()))
    while left:
        open_ = [s for s in order if taken[s] < sizes[s]]
        share, extra = divmod(left, len(open_))
        for i, stratum in enumerate(open_):
            give = min(share + (i < extra), sizes[stratum] - taken[stratum])
            taken[stratum] += give
            left -= give
    return {s: taken[s] for s in sorted(taken) if taken[s]}


def draw(repo_of: Mapping[str, str], n: int, seed: int, strata: Strata = "repo") -> list[str]:
    """A sorted seeded sample of ``n`` ids of ``repo_of`` (id -> repository)."""
    ids = sorted(repo_of)
    if n >= len(ids):
        return ids
    if strata == "none":
        return sorted(random.Random(seed).sample(ids, n))
    members: dict[str, list[str]] = {}
    for instance_id in ids:
        members.setdefault(repo_of[instance_id], []).append(instance_id)
    if len(members) == 1:  # one stratum: the plain sample, as drawn before strata existed
        return sorted(random.Random(seed).sample(ids, n))
    chosen: list[str] = []
    for repo, k in quotas({r: len(m) for r, m in members.items()}, n, seed).items():
        chosen += random.Random(f"{seed}:{repo}").sample(members[repo], k)
    return sorted(chosen)


def describe(repo_of: Mapping[str, str], chosen: Sequence[str]) -> str:
    """ "3 repositories: a/x 4, b/y 4, c/z 2" for the header of a table."""
    counts: dict[str, int] = {}
    for instance_id in chosen:
        counts[repo_of[instance_id]] = counts.get(repo_of[instance_id], 0) + 1
    parts = ", ".join(f"{repo} {k}" for repo, k in sorted(counts.items()))
    return f"{len(counts)} repositor{'y' if len(counts) == 1 else 'ies'}: {parts}"
