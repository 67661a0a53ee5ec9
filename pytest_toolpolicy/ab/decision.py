"""Moved to :mod:`pytest_toolpolicy.decide.decision`; this path is kept for one release.

Import from the new path (what this module held elsewhere is imported below from its new
module).
"""

# ruff: noqa: F401, F403
from ..decide.decision import *
from ..decide.decision import (
    CRITERIA,
    FAILED,
    NOT_JUDGED,
    PASSED,
    REGRESSION,
    SPEND_LIMIT,
    Criterion,
    Decision,
    decide,
    endpoint_doubt,
    no_decision_reason,
)
from ..decide.exact import exact, unobservable
from ..decide.fmt import MINUS, limit, number, plural, signed
