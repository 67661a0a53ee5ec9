"""Moved to :mod:`pytest_toolpolicy.decide.stats`; this path is kept for one release.

Import from the new path.
"""

# ruff: noqa: F401, F403
from ..decide.stats import *
from ..decide.stats import mcnemar_exact, paired_bootstrap
