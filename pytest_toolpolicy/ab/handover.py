"""Moved to :mod:`pytest_toolpolicy.session.handover`; this path is kept for one release.

Import from the new path.
"""

# ruff: noqa: F401, F403
from ..session.handover import *
from ..session.handover import KEY, MEMO_DAYS, TOKEN_FILE, Handover, reachable
