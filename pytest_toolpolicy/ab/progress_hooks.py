"""Moved to :mod:`pytest_toolpolicy.session.progress_hooks`; this path is kept for one release.

Import from the new path (what this module held elsewhere is imported below from its new
module).
"""

# ruff: noqa: F401, F403
from ..session.item_run import ROW_PROPERTY
from ..session.progress import INTERVAL_S, WAIT_POLL_S, Progress, level_for
from ..session.progress_hooks import *
from ..session.progress_hooks import ITEM_FIXTURE, ProgressHooks, progress_hooks
from ..session.progress_lines import item_nodes, row_in
from ..session.session import ABSession
from ..session.ticker import TerminalCopy, Ticker, interval_from_env
