"""Moved to :mod:`pytest_toolpolicy.run.itemdir`; this path is kept for one release.

Import from the new path.
"""

# ruff: noqa: F401, F403
from ..run.itemdir import *
from ..run.itemdir import (
    LOCK_WAIT_ENV,
    LOCK_WAIT_S,
    NOTE_SUFFIX,
    POLL_S,
    WORKDIR_ENV,
    Holder,
    ItemLockTimeout,
    Waiting,
    default_workdir,
    held,
    holder_of,
    lock_path,
    me,
    note_path,
    report_root,
    waiting_notes,
)
