"""The six code primitives (spec "component 01") over a git workspace."""

from .codeindex import CodeIndex, Entity
from .envelope import Envelope, PrimitiveError, fail, ok
from .toolbox import TOOLS, Toolbox
from .workspace import Workspace, WorkspaceError

__all__ = [
    "TOOLS",
    "CodeIndex",
    "Entity",
    "Envelope",
    "PrimitiveError",
    "Toolbox",
    "Workspace",
    "WorkspaceError",
    "fail",
    "ok",
]
