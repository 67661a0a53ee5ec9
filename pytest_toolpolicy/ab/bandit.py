"""Moved to :mod:`pytest_toolpolicy.run.bandit`; this path is kept for one release.

Import from the new path (what this module held elsewhere is imported below from its new
module).
"""

# ruff: noqa: F401, F403
from ..decide.bandit_curve import Curve, curve, line_of
from ..run.bandit import *
from ..run.bandit import NOTHING, BanditSpec, BanditStore, ucb1
