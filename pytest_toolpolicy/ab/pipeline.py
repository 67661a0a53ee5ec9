"""Moved to :mod:`pytest_toolpolicy.run.pipeline`; this path is kept for one release.

Import from the new path (what this module held elsewhere is imported below from its new
module).
"""

# ruff: noqa: F401, F403
from ..run.arms import Prepared, build_loop, check_arm, dispatch_for, prepare, task_of
from ..run.counterfactual import CallPrecision
from ..run.generation import Generation
from ..run.memo import DispatchStats, ExecutionMemo, grade_key
from ..run.pipeline import *
from ..run.pipeline import RerunError, RunRecord, RunSetup, run_instance
from ..run.replay import ModelStats, RecordedModel, Suppressor
