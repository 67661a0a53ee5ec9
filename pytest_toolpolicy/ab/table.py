"""Moved to :mod:`pytest_toolpolicy.decide.table`; this path is kept for one release.

Import from the new path (what this module held elsewhere is imported below from its new
module).
"""

# ruff: noqa: F401, F403
from ..decide.ablation import ablate, no_change_flags
from ..decide.bandit_curve import line_of
from ..decide.decision import decide, no_decision_reason
from ..decide.exact import MEASURES
from ..decide.measures import measures, row_of
from ..decide.meta import meta_from
from ..decide.paired import paired, unpaired_reason
from ..decide.power import power_of
from ..decide.render import render_html, render_markdown, render_text
from ..decide.report_files import write_report
from ..decide.results import conform, escape_strings
from ..decide.sample import SHARED
from ..decide.table import *
from ..decide.table import decision_table
from ..decide.variants import gate_of, reference_of

__all__ = ["decision_table", "meta_from", "render_markdown", "render_text", "write_report"]
