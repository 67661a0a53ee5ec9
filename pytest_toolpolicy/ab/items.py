"""Moved to :mod:`pytest_toolpolicy.session.items`; this path is kept for one release.

Import from the new path.
"""

# ruff: noqa: F401, F403
from ..session.items import *
from ..session.items import test_instance
