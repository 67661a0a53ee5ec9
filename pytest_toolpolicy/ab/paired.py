"""Moved to :mod:`pytest_toolpolicy.decide.paired`; this path is kept for one release.

Import from the new path (what this module held elsewhere is imported below from its new
module).
"""

# ruff: noqa: F401, F403
from ..decide.fmt import plural
from ..decide.paired import *
from ..decide.paired import (
    CAUSES,
    NOTHING_MEASURED,
    PAIR_KEYS,
    Paired,
    failure_causes,
    paired,
    unpaired_reason,
)
from ..decide.sample import OWN, RUN_KEYS, measured, resolved_as_measured, trials_of
from ..decide.stats import mcnemar_exact, paired_bootstrap
from ..decide.variants import repo_of
