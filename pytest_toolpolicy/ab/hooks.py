"""Moved to :mod:`pytest_toolpolicy.session.hooks`; this path is kept for one release.

Import from the new path (what this module held elsewhere is imported below from its new
module).
"""

# ruff: noqa: F401, F403
from ..decide.variants import ItemSpec, item_of
from ..session.hooks import *
from ..session.hooks import SHIPPED_NODE, ABHooks
from ..session.item import ItemHandle
from ..session.item_run import RECORD_PROPERTY
from ..session.session import ABSession
