"""Moved to :mod:`pytest_toolpolicy.run.gate_acts`; this path is kept for one release.

Import from the new path.
"""

# ruff: noqa: F401, F403
from ..run.gate_acts import *
from ..run.gate_acts import UNAVAILABLE, acts, blocked, total
