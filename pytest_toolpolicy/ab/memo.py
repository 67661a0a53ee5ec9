"""Moved to :mod:`pytest_toolpolicy.run.memo`; this path is kept for one release.

Import from the new path (what this module held elsewhere is imported below from its new
module).
"""

# ruff: noqa: F401, F403
from ..run.memo import *
from ..run.memo import (
    FORMAT_VERSION,
    READ_ONLY,
    DispatchStats,
    ExecutionMemo,
    MemoDispatch,
    MemoError,
    grade_key,
)
from ..run.memo_files import Change
