"""Moved to :mod:`pytest_toolpolicy.session.endpoint`; this path is kept for one release.

Import from the new path.
"""

# ruff: noqa: F401, F403
from ..session.endpoint import *
from ..session.endpoint import OPTIONS, Endpoint, EndpointError, T, endpoint_from
