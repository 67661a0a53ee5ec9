"""The harness's host-side bounds: how much a workspace, a model reply or a host-side step may
cost before it is stopped and reported as what it is.

The sandbox bounds what a model runs; these bound what the harness itself does on the host over
what the model left behind. Defaults fit a 2-core machine; ``TOOLPOLICY_LIMITS`` (or
``--toolpolicy-limits`` / ``toolpolicy run --limits``, which set it) changes them, e.g.
``TOOLPOLICY_LIMITS="workspace_mb=1024,search_s=120"``.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass

ENV = "TOOLPOLICY_LIMITS"


class LimitsError(ValueError):
    pass


@dataclass(frozen=True)
class Limits:
    # Bytes of files (the top .git aside) a sandboxed run may leave in its writable workspace;
    # past it the run is stopped and its result says so.
    workspace_mb: float = 512
    # One host-side git step over a workspace (tree hash, checkpoint, restore, patch).
    snapshot_s: float = 120
    # One model response body, as read off the wire.
    response_mb: float = 4
    # One search_code call's embedding work; past it the call ranks by BM25 and says why.
    search_s: float = 60
    # One host-side read of a workspace file (the code index, read_entity, memo capture).
    read_mb: float = 16

    @property
    def workspace_bytes(self) -> int:
        return int(self.workspace_mb * (1 << 20))

    @property
    def response_bytes(self) -> int:
        return int(self.response_mb * (1 << 20))

    @property
    def read_bytes(self) -> int:
        return int(self.read_mb * (1 << 20))

    def text(self) -> str:
        return ",".join(f"{f.name}={getattr(self, f.name):g}" for f in dataclasses.fields(self))


NAMES = tuple(f.name for f in dataclasses.fields(Limits))


def parse_limits(text: str | None, base: Limits | None = None) -> Limits:
    """``"name=value,..."`` over ``base`` (default: the defaults); a bad name or value raises
    ``LimitsError`` naming it."""
    base = base or Limits()
    changes: dict[str, float] = {}
    for item in filter(None, (part.strip() for part in (text or "").split(","))):
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or name not in NAMES:
            raise LimitsError(f"unknown limit {item!r}: limits are {', '.join(NAMES)} (NAME=VALUE)")
        try:
            number = float(value)
        except ValueError:
            raise LimitsError(f"limit {name} must be a number, got {value.strip()!r}") from None
        if not math.isfinite(number) or number <= 0:
            raise LimitsError(f"limit {name} must be a positive number, got {value.strip()!r}")
        changes[name] = number
    return dataclasses.replace(base, **changes)


def current(environ: Mapping[str, str] | None = None) -> Limits:
    """The limits in force: the defaults with ``TOOLPOLICY_LIMITS`` over them."""
    env = os.environ if environ is None else environ
    return parse_limits(env.get(ENV))
