"""Moved to :mod:`pytest_toolpolicy.run.counterfactual`; this path is kept for one release.

Import from the new path (what this module held elsewhere is imported below from its new
module).
"""

# ruff: noqa: F401, F403
from ..run.counterfactual import *
from ..run.counterfactual import CallPrecision, Rerun, executed_calls, measure
from ..run.memo import DispatchStats
from ..run.replay import ModelStats, Suppressor
