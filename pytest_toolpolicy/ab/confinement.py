"""Moved to :mod:`pytest_toolpolicy.session.confinement`; this path is kept for one release.

Import from the new path.
"""

# ruff: noqa: F401, F403
from ..session.confinement import *
from ..session.confinement import (
    INSTALL,
    OPT_IN,
    SandboxRefused,
    confined,
    home_problem,
    model_runs,
    session_sandbox,
    untrusted_runs,
)
