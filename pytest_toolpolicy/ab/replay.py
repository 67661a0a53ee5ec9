"""Moved to :mod:`pytest_toolpolicy.run.replay`; this path is kept for one release.

Import from the new path.
"""

# ruff: noqa: F401, F403
from ..run.replay import *
from ..run.replay import ModelStats, RecordedModel, Suppressor
