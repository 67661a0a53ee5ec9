"""Moved to :mod:`pytest_toolpolicy.decide.results`; this path is kept for one release.

Import from the new path (what this module held elsewhere is imported below from its new
module).
"""

# ruff: noqa: F401, F403
from ..decide.results import *
from ..decide.results import conform, escape_strings, results_frame
from ..decide.schema import COLUMNS, OPTIONAL_COLUMNS
from ..run.rebuild import results_from_trajectories
from ..run.row import row_of, spec_of
