"""Moved to :mod:`pytest_toolpolicy.session.session`; this path is kept for one release.

Import from the new path (what this module held elsewhere is imported below from its new
module).
"""

# ruff: noqa: F401, F403
from ..decide.variants import ItemSpec, item_of
from ..run.bandit import BanditStore
from ..run.candidates import candidate_line
from ..run.item import Harness, run_item
from ..run.itemdir import Waiting, report_root, waiting_notes
from ..run.memo import ExecutionMemo
from ..run.row import error_row
from ..session.confinement import SandboxRefused, session_sandbox
from ..session.handover import TOKEN_FILE, Handover
from ..session.item_run import RECORD_PROPERTY, ROW_PROPERTY
from ..session.session import *
from ..session.session import ABSession
from ..session.settings import Settings
from ..session.store import ItemStore, ReportDirError, ReportDirTaken, claim, prepare
