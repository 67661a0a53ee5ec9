"""Moved to :mod:`pytest_toolpolicy.session.ticker`; this path is kept for one release.

Import from the new path.
"""

# ruff: noqa: F401, F403
from ..session.ticker import *
from ..session.ticker import ENV, JOIN_S, TerminalCopy, Ticker, interval_from_env
