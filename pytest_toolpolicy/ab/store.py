"""Moved to :mod:`pytest_toolpolicy.session.store`; this path is kept for one release.

Import from the new path (what this module held elsewhere is imported below from its new
module).
"""

# ruff: noqa: F401, F403
from ..decide.variants import item_of
from ..session.store import *
from ..session.store import LOCK_NAME, ItemStore, ReportDirError, ReportDirTaken, claim, prepare
