"""Moved to :mod:`pytest_toolpolicy.decide.schema`; this path is kept for one release.

Import from the new path (what this module held elsewhere is imported below from its new
module).
"""

# ruff: noqa: F401, F403
from ..decide.results_column import Column
from ..decide.schema import *
from ..decide.schema import COLUMNS, OPTIONAL_COLUMNS, SPECS
from ..decide.variants import (
    ABLATION_PREFIX,
    ARMS,
    CANDIDATE_PREFIX,
    FIRST_ABLATIONS,
    ablation_variant,
    gate_of,
    item_of,
    reference_of,
    repo_of,
    variant_order,
)
