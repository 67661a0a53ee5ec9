"""What the controller hands each xdist worker, so that a worker on another machine (an execnet
``socket=`` or ``ssh=`` gateway, sharing no disk with the controller) runs its items alike.

- the instance ids the controller loaded: every worker parametrizes the same items, even one
  that cannot load the dataset itself (its items then fail with the reason, not the session);
- the controller's report directory and a token written into it: a worker that finds the token
  there shares the controller's disk and its execution memo (as local ``-n`` workers always
  did); any other keeps a memo of its own under its cache directory;
- with ``--toolpolicy-resume``, the rows of the items already finished (the records stay on the
  controller's disk);
- a ``local:`` model's address, which a worker uses when it can reach it and otherwise starts
  a server of its own.

It travels in ``workerinput`` (``pytest_configure_node``), as JSON-plain values. The items'
environments do not: the controller builds them before any item is scheduled, which is after
this is handed over, and a worker resolves its own before its first item (``environments.py``):
on the controller's disk it finds them built, on another machine it builds them there.
"""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..paths import cache_dir

KEY = "toolpolicy_handover"
TOKEN_FILE = "session.token"


@dataclass(frozen=True)
class Handover:
    instance_ids: list[str]
    report: str  # the controller's report directory, absolute
    token: str  # this session's, also in report/session.token
    resumed: dict[str, dict[str, Any]] = field(default_factory=dict)  # item -> {row, attempt}
    local_url: str | None = None

    def to_input(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_input(cls, workerinput: dict[str, Any]) -> Handover | None:
        data = workerinput.get(KEY)
        return cls(**data) if isinstance(data, dict) else None

    def shares_disk(self) -> bool:
        """Whether this process sees the controller's report directory (the token is there)."""
        try:
            return (Path(self.report) / TOKEN_FILE).read_text(encoding="utf-8") == self.token
        except OSError:
            return False

    def memo_path(self) -> Path:
        """The execution memo a worker uses: the controller's when on its disk; else one of
        this machine's, kept for this session (its workers share it). Those of sessions that
        ended days ago are removed: a cache, not a result."""
        if self.shares_disk():
            return Path(self.report) / "memo.sqlite"
        directory = cache_dir() / "memo"
        directory.mkdir(parents=True, exist_ok=True)
        _sweep(directory, time.time() - MEMO_DAYS * 86400)
        return directory / f"{self.token}.sqlite"


MEMO_DAYS = 2


def _sweep(directory: Path, before: float) -> None:
    for path in directory.glob("*.sqlite*"):
        try:
            if path.lstat().st_mtime < before:
                path.unlink()
        except OSError:  # another worker of this machine removed it first
            continue


def reachable(url: str, timeout: float = 2.0) -> bool:
    """Whether a llama.cpp server answers at ``url`` (its ``/health``), from this machine."""
    base = url.removesuffix("/").removesuffix("/v1")
    try:
        with urllib.request.urlopen(f"{base}/health", timeout=timeout) as answer:
            return bool(answer.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False
