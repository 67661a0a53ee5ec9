"""Moved to :mod:`pytest_toolpolicy.session.report`; this path is kept for one release.

Import from the new path (what this module held elsewhere is imported below from its new
module).
"""

# ruff: noqa: F401, F403
from ..decide.failures import failure_lines
from ..decide.render import render_text
from ..decide.report_files import write_report
from ..decide.results import escape_strings
from ..decide.table import decision_table
from ..session.report import *
from ..session.report import (
    NOTHING_MEASURED,
    Finished,
    build_viewer,
    finish,
    gate_failure,
    write_instances,
    write_trajectories,
)
