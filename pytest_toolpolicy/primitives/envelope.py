"""The envelope every primitive returns: ``{"ok": bool, "error": str | None, "data": ...}``."""

from __future__ import annotations

import errno
from typing import Any

Envelope = dict[str, Any]


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
