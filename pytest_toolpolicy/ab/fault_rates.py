"""Moved to :mod:`pytest_toolpolicy.run.fault_rates`; this path is kept for one release.

Import from the new path (what this module held elsewhere is imported below from its new
module).
"""

# ruff: noqa: F401, F403
from ..run.arms import ARMS
from ..run.fault_rates import *
from ..run.fault_rates import Rates, measure
from ..run.memo import ExecutionMemo
from ..run.pipeline import RunSetup, run_instance
