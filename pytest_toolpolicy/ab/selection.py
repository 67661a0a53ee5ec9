"""Moved to :mod:`pytest_toolpolicy.run.selection`; this path is kept for one release.

Import from the new path.
"""

# ruff: noqa: F401, F403
from ..run.selection import *
from ..run.selection import DECISION_POINTS, abstained, moves, replies_parsed, score
