"""Moved to :mod:`pytest_toolpolicy.run.item`; this path is kept for one release.

Import from the new path (what this module held elsewhere is imported below from its new
module).
"""

# ruff: noqa: F401, F403
from ..decide.variants import ItemSpec
from ..run.bandit import BanditStore
from ..run.candidates import Candidate
from ..run.generation import Generation
from ..run.item import *
from ..run.item import Harness, run_item
from ..run.itemdir import LOCK_WAIT_S, held
from ..run.memo import ExecutionMemo
from ..run.pipeline import RunSetup, run_instance
from ..run.row import row_of
