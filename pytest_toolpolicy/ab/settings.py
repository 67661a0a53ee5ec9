"""Moved to :mod:`pytest_toolpolicy.session.settings`; this path is kept for one release.

Import from the new path (what this module held elsewhere is imported below from its new
module).
"""

# ruff: noqa: F401, F403
from ..decide.variants import FIRST_ABLATIONS
from ..run.candidates import Candidate, CandidateError
from ..run.candidates_file import read_candidates
from ..run.generation import Generation, GenerationError, generation_from
from ..run.itemdir import LOCK_WAIT_ENV, LOCK_WAIT_S, WORKDIR_ENV, default_workdir
from ..session.confinement import home_problem
from ..session.endpoint import Endpoint, EndpointError, endpoint_from
from ..session.setting_values import SettingsError, ablation_order
from ..session.settings import *
from ..session.settings import (
    BARE,
    CACHE_MODES,
    MAX_TRIALS,
    MODES,
    SANDBOX_MODES,
    Settings,
    limits_from,
    settings_from,
)
