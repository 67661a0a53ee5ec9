"""Moved to :mod:`pytest_toolpolicy.run.arms`; this path is kept for one release.

Import from the new path (what this module held elsewhere is imported below from its new
module).
"""

# ruff: noqa: F401, F403
from ..run.arms import *
from ..run.arms import (
    ARMS,
    Dispatch,
    Prepared,
    build_loop,
    check_arm,
    default_dispatch,
    dispatch_for,
    prepare,
    task_of,
)
from ..run.memo import ExecutionMemo, MemoDispatch
