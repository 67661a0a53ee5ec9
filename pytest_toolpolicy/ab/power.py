"""Moved to :mod:`pytest_toolpolicy.decide.power`; this path is kept for one release.

Import from the new path.
"""

# ruff: noqa: F401, F403
from ..decide.power import *
from ..decide.power import ALPHA, POWER, Power, detectable_delta, pairs_needed, power_of
