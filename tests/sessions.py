"""The environment of a user's pytest session that a test starts in a subprocess."""

from __future__ import annotations

import os

# The session is the user's, not this run's: options given to this run through PYTEST_ADDOPTS
# (--durations, -x, -k) would change what it collects and prints. Hypothesis' pytest plugin is
# left out: no session of the tests uses it, and in a fresh process it costs ~2 s (its whole
# package is assertion-rewritten on import, and with PYTHONDONTWRITEBYTECODE set nothing of that
# is cached), on every subprocess run and on every xdist worker such a run starts.
ADDOPTS = "-p no:hypothesispytest"


def session_env() -> dict[str, str]:
    """This process's environment with the session's own PYTEST_ADDOPTS."""
    return {**os.environ, "PYTEST_ADDOPTS": ADDOPTS}
