"""The table ``toolpolicy envs build`` ends with: one row per environment (repository and
version, its interpreter, the instances that need it, built / cached / failed, seconds, size on
disk, why it failed), beside the line each prints as it ends."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class BuildRow:
    spec: str  # "owner/name version"
    commit: str
    instances: int
    status: str  # built | cached | failed
    seconds: float
    python: str = ""
    mib: float | None = None
    reason: str = ""


def disk_mib(path: Path) -> float | None:
    """What a directory holds, in MiB (links counted as links, never followed); None when it
    cannot be read."""
    total = 0
    stack = [str(path)]
    try:
        while stack:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    else:
                        total += entry.stat(follow_symlinks=False).st_blocks * 512
    except OSError:
        return None
    return round(total / (1 << 20), 1)


def format_rows(rows: list[BuildRow]) -> str:
    header = ("environment", "python", "instances", "status", "seconds", "MiB", "why")
    body = [
        (
            f"{r.spec} @ {r.commit[:12]}",
            r.python or "-",
            str(r.instances),
            r.status,
            f"{r.seconds:.1f}",
            "-" if r.mib is None else f"{r.mib:.0f}",
            r.reason,
        )
        for r in rows
    ]
    widths = [
        max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(header)
    ]
    lines = ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
             for line in [header, *body]]  # fmt: skip
    built = sum(r.status == "built" for r in rows)
    cached = sum(r.status == "cached" for r in rows)
    failed = sum(r.status == "failed" for r in rows)
    lines.append(f"{len(rows)} environment(s): {built} built, {cached} cached, {failed} failed")
    return "\n".join(lines)
