"""Moved to :mod:`pytest_toolpolicy.run.row`; this path is kept for one release.

Import from the new path (what this module held elsewhere is imported below from its new
module).
"""

# ruff: noqa: F401, F403
from ..decide.results_column import Source
from ..decide.schema import SPECS
from ..decide.variants import CANDIDATE_PREFIX, ItemSpec, repo_of
from ..run.row import *
from ..run.row import error_row, row_of, source_of, spec_of
