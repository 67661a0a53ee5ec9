"""The decision table's statistics columns: the paired comparison with the reference (McNemar's
exact test on the discordant pairs, bootstrap intervals, clustered where pairs share a
repository or an instance) and the power of its resolve comparison. They inform the reader and
never change a verdict (``paired.py``, ``stats.py``, ``power.py``).

Each column is computed from the variant judged against its reference (``Judging``); empty
(``MISSING``) where the reference did not run.
"""

from __future__ import annotations

from collections.abc import Callable

from .judging import Judging
from .paired import Paired
from .power import Power
from .table_column import MISSING, TableColumn

Stat = TableColumn[Judging]


def _paired(name: str, doc: str, read: Callable[[Paired], object]) -> Stat:
    return Stat(name, doc, lambda j: read(j.paired) if j.compared else MISSING)


def _power(name: str, doc: str, read: Callable[[Power], object]) -> Stat:
    return Stat(name, doc, lambda j: read(j.power) if j.compared else MISSING)


STATS_COLUMNS: tuple[Stat, ...] = (
    _paired("n_pairs", "(instance, seed, trial) pairs measured in both", lambda p: p.n_pairs),
    _paired("mcnemar_b", "pairs the reference resolved and the variant did not", lambda p: p.b),
    _paired("mcnemar_c", "pairs the variant resolved and the reference did not", lambda p: p.c),
    _paired("mcnemar_p", "McNemar's exact two-sided p on b and c", lambda p: p.mcnemar_p),
    _paired(
        "resolve_ci_low",
        "95% bootstrap interval of the resolve difference: low",
        lambda p: p.resolve_ci[0],
    ),
    _paired("resolve_ci_high", "... and high", lambda p: p.resolve_ci[1]),
    _paired(
        "cost_ci_low", "95% interval of the mean per-pair $ difference: low", lambda p: p.cost_ci[0]
    ),
    _paired("cost_ci_high", "... and high", lambda p: p.cost_ci[1]),
    _paired(
        "tokens_ci_low",
        "95% interval of the mean per-pair token difference: low",
        lambda p: p.tokens_ci[0],
    ),
    _paired("tokens_ci_high", "... and high", lambda p: p.tokens_ci[1]),
    _paired(
        "ci_clustered_by",
        "what the intervals resample whole: repo, instance (trials), or empty (pairs)",
        lambda p: p.clustered_by,
    ),
    _power(
        "detectable_delta",
        "the smallest resolve difference this many pairs detect at 80% power",
        lambda w: w.detectable_delta,
    ),
    _power(
        "pairs_needed",
        "the pairs the observed difference would need for 80% power",
        lambda w: w.pairs_needed,
    ),
    _power("power_note", "the two power figures in words", lambda w: w.line()),
)
