"""The envelope every primitive returns: ``{"ok": bool, "error": str | None, "data": ...}``."""

from __future__ import annotations

import errno
from collections.abc import Callable
from typing import Any, TypeAlias, TypedDict


class Envelope(TypedDict):
    """What every tool call returns (``Toolbox.call``, the baseline's ``call_tool``, a loop's
    dispatch). A plain dict at run time, so it is stored and replayed as JSON unchanged.

    The trust gate still checks a captured envelope's shape (spec §6.2): a wrapper between the
    tools and the loop (the simulator's flaky tool) may have bent it.
    """

    ok: bool
    error: str | None  # None when ``ok``; else why the call failed
    data: Any  # the tool's payload (its declared shape: ``policy.shapes.SHAPES``), or None


# A loop's tool caller: ``(tool, args) -> Envelope`` (``Toolbox.call``, the execution memo...).
Dispatch: TypeAlias = Callable[[str, dict[str, Any]], Envelope]


def ok(data: Any) -> Envelope:
    return {"ok": True, "error": None, "data": data}


def fail(error: str, data: Any = None) -> Envelope:
    return {"ok": False, "error": error, "data": data}


class PrimitiveError(Exception):
    """A failed tool call: becomes an ``ok: false`` envelope, never a crash."""


class HarnessFault(RuntimeError):
    """A fault of the harness itself inside a tool (an index or sandbox bug, a host-side step
    that failed): the run stops and its item fails with this message; the model never reads it
    as a tool result. Bad *input* is a ``PrimitiveError`` instead."""


# A failed write with one of these is the host's state (a full or read-only disk), not the
# workspace's: a harness fault, never an observation.
HOST_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO})
