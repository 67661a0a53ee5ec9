"""Moved to :mod:`pytest_toolpolicy.decide.measures`; this path is kept for one release.

Import from the new path (what this module held elsewhere is imported below from its new
module).
"""

# ruff: noqa: F401, F403
from ..decide.exact import MAY_GO_UNOBSERVED, MEASURES, exact, to_fraction, unobservable
from ..decide.measures import *
from ..decide.measures import COLUMNS, measures, row_of
from ..decide.sample import (
    MEASURED,
    NONE,
    OWN,
    RUN_KEYS,
    SHARED,
    incomplete_instances,
    label_sources,
    measured,
    resolved_as_measured,
    run_keys,
    trials_of,
    unlabelled_instances,
)
from ..decide.variants import variant_order
