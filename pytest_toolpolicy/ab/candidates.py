"""Moved to :mod:`pytest_toolpolicy.run.candidates`; this path is kept for one release.

Import from the new path (what this module held elsewhere is imported below from its new
module).
"""

# ruff: noqa: F401, F403
from ..decide.variants import CANDIDATE_PREFIX as PREFIX
from ..decide.variants import candidate_of
from ..run.bandit import BanditSpec
from ..run.candidates import *
from ..run.candidates import Candidate, CandidateError, candidate_line
from ..run.candidates_file import load_candidates, read_candidates
