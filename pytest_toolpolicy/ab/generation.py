"""Moved to :mod:`pytest_toolpolicy.run.generation`; this path is kept for one release.

Import from the new path.
"""

# ruff: noqa: F401, F403
from ..run.generation import *
from ..run.generation import (
    CURRENT_TOKENS,
    DEFAULT_LIMITS,
    OPTIONS,
    POLICY_TOKENS,
    STRUCTURED,
    Generation,
    GenerationError,
    LocalServerOptions,
    generation_from,
)
