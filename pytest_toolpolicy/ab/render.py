"""Moved to :mod:`pytest_toolpolicy.decide.render`; this path is kept for one release.

Import from the new path (what this module held elsewhere is imported below from its new
module).
"""

# ruff: noqa: F401, F403
from ..decide.compact import COMPACT, SAMPLE_LABELS, compact_header, compact_rows
from ..decide.decision import no_decision_reason
from ..decide.detail_columns import PASS_K
from ..decide.exact import unobservable
from ..decide.failures import failure_lines
from ..decide.header import LOCAL_DISCLAIMER, LOCAL_DISCLAIMERS, SIM_DISCLAIMER, header_lines
from ..decide.measure_columns import ENDPOINT_ERRORS
from ..decide.measures import row_of
from ..decide.notes import LABEL_COUNTS, label_lines
from ..decide.render import *
from ..decide.render import render_html, render_markdown, render_text
from ..decide.sample import NONE, OWN
from ..decide.summary import UNDECIDED, summary_lines
from ..decide.variants import CANDIDATE_PREFIX, candidate_of, gate_of, item_of
