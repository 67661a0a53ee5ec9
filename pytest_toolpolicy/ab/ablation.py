"""Moved to :mod:`pytest_toolpolicy.decide.ablation`; this path is kept for one release.

Import from the new path (what this module held elsewhere is imported below from its new
module).
"""

# ruff: noqa: F401, F403
from ..decide.ablation import *
from ..decide.ablation import NOISE, RELATIVE, Ablation, ablate, no_change_flags
from ..decide.exact import MEASURES, exact, unobservable
from ..decide.fmt import percent, signed
