"""Moved to :mod:`pytest_toolpolicy.decide.fmt`; this path is kept for one release.

Import from the new path.
"""

# ruff: noqa: F401, F403
from ..decide.fmt import *
from ..decide.fmt import MINUS, limit, number, percent, plural, signed
