"""Moved to :mod:`pytest_toolpolicy.session.progress`; this path is kept for one release.

Import from the new path (what this module held elsewhere is imported below from its new
module).
"""

# ruff: noqa: F401, F403
from ..decide.variants import ABLATION_PREFIX, CANDIDATE_PREFIX, item_of
from ..session.progress import *
from ..session.progress import INTERVAL_S, STEPS, WAIT_POLL_S, Level, Progress, level_for
from ..session.progress_lines import (
    ERROR_WIDTH,
    clock,
    eta,
    item_line,
    item_nodes,
    resolved_by_group,
    row_in,
    spend,
    summary_line,
    usd,
)
