"""Record/replay in front of any model, so a team records once and CI replays for free.

Modes: ``off`` calls the inner model and touches no file; ``record`` reads through (a hit is
served from the file, a miss calls the inner model and stores its answer); ``replay`` serves hits
only, and a miss is a ``ModelError`` naming item, turn and model, so CI never spends money by
accident.

The key is the sha256 of a canonical JSON of the model id, the messages and the request
parameters; the request's ``item`` and ``turn`` are not part of it, so a counterfactual rerun that
makes the same earlier calls is served from the cache. The first completion recorded for a key is
the one every later identical request gets, however often and wherever it recurs: the same prompt
at two turns returns the same text twice. (Two processes missing the same key at once each return
their own fresh answer; the file keeps whichever was stored first.)

A served completion keeps its original usage, cost and latency and is flagged ``replayed=True``,
so reports can show what a run would have cost live and, apart, what it spent.

A call that raised ``ModelError`` is recorded too, as an error entry (its message, usage and
blame), and the error is raised on. ``replay`` raises it again, the same message and usage, so a replayed run
fails where the recorded one did rather than on a replay miss. ``record`` does not serve an error
entry: it calls the model again, and a completion (or the new error) takes the entry's place. A
recorded completion is never replaced, by an error or anything else.

A stored entry that cannot be read (the file is data from outside: ``cachefile`` says what it
refuses) is a ``ModelError`` for the call that wanted it, naming the file and the entry's key.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal, get_args

from .. import jsonsafe
from .base import Completion, Model, ModelError, ModelRequest, Usage, cost_of
from .cachefile import CacheEntry, CacheEntryError, CacheError, CacheFile
from .tool_layer import tool_layer

if TYPE_CHECKING:
    from ..primitives.envelope import Dispatch
    from ..primitives.workspace import Workspace

__all__ = [
    "CacheEntry",
    "CacheEntryError",
    "CacheError",
    "CacheMode",
    "CacheStats",
    "CachedModel",
    "request_key",
]

CacheMode = Literal["off", "record", "replay"]


@dataclass(frozen=True)
class CacheStats:
    hits: int = 0
    misses: int = 0
    # Misses this process answered and wrote; a miss another writer stored first is not counted.
    stored: int = 0
    # Error entries this process wrote (a miss whose call raised ModelError; a completion another
    # writer stored first is not counted); not in ``stored``.
    errors_stored: int = 0
    # Hits that were an error entry, raised again in replay mode; counted in ``hits`` too.
    errors_replayed: int = 0


def request_key(model: str, request: ModelRequest) -> tuple[str, str]:
    """The cache key of ``request`` to ``model``, and the canonical JSON it hashes."""
    payload: dict[str, object] = {
        "model": model,
        "messages": [dict(message) for message in request.messages],
        "params": request.params(),
    }
    if request.trial > 1:  # the first trial keeps the key a single run always had
        payload["trial"] = request.trial
    # exact(): a prompt carrying an earlier reply's lone surrogate still has a key (its
    # ensure_ascii form, so no other request shares it), and every other key is unchanged.
    canonical = jsonsafe.exact(payload, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest(), canonical


class CachedModel:
    """A ``Model`` that records the answers of ``inner`` into ``path`` or replays them from it.

    ``inner`` may be None in replay mode; ``name`` (the model id in the key) then has to be
    given, and otherwise defaults to ``inner.name``.
    """

    def __init__(
        self,
        inner: Model | None,
        path: str | os.PathLike[str],
        mode: CacheMode,
        *,
        name: str | None = None,
    ) -> None:
        if mode not in get_args(CacheMode):
            raise ValueError(f"cache mode must be one of off, record, replay, not {mode!r}")
        if inner is None and mode != "replay":
            raise ValueError(f"cache mode {mode!r} needs a model to call on a miss")
        if name is None:
            if inner is None:
                raise ValueError("replaying without a model needs the model's name")
            name = inner.name
        self.name = name
        self.mode: CacheMode = mode
        self._inner = inner
        self._lock = threading.Lock()
        self._stats = CacheStats()
        self.file = None if mode == "off" else CacheFile(path, create=mode == "record")

    def tool_layer(
        self, dispatch: Dispatch, *, arm: str, item: str, workspace: Workspace | None
    ) -> Dispatch:
        """The wrapped model's tool layer: a wrapper changes requests, never the tools."""
        return tool_layer(self._inner, dispatch, arm=arm, item=item, workspace=workspace)

    def cost_of(self, usage: Usage) -> float | None:
        """The wrapped model's price for ``usage``; None when replaying without one."""
        return cost_of(self._inner, usage)

    @property
    def stats(self) -> CacheStats:
        return self._stats

    def complete(self, request: ModelRequest) -> Completion:
        if self.file is None:
            assert self._inner is not None
            return self._inner.complete(request)
        key, canonical = request_key(self.name, request)
        with self._lock:
            try:
                found = self.file.get(key)
            except CacheEntryError as exc:
                # This call's answer is unreadable: its item ends as a model error naming the
                # entry, and the run goes on.
                raise ModelError(str(exc)) from None
            if isinstance(found, ModelError) and self.mode == "record":
                found = None  # a recording run retries what failed before
            self._count(
                hits=int(found is not None),
                misses=int(found is None),
                errors_replayed=int(isinstance(found, ModelError)),
            )
        if isinstance(found, ModelError):
            raise found
        if found is not None:
            return found
        if self.mode == "replay":
            raise ModelError(
                f"replay miss for item {request.item or '?'} turn {request.turn}"
                f" (model {self.name}): no recorded completion;"
                " record it with --toolpolicy-cache=record"
            )
        assert self._inner is not None
        # Not under the lock: a slow model call must not hold up other threads' hits.
        try:
            completion = self._inner.complete(request)
        except ModelError as exc:
            with self._lock:
                if self.file.put_error(key, self.name, canonical, exc):
                    self._count(errors_stored=1)
            raise
        with self._lock:
            if self.file.put(key, self.name, canonical, completion):
                self._count(stored=1)
        return completion

    def _count(
        self,
        *,
        hits: int = 0,
        misses: int = 0,
        stored: int = 0,
        errors_stored: int = 0,
        errors_replayed: int = 0,
    ) -> None:
        s = self._stats
        self._stats = replace(
            s,
            hits=s.hits + hits,
            misses=s.misses + misses,
            stored=s.stored + stored,
            errors_stored=s.errors_stored + errors_stored,
            errors_replayed=s.errors_replayed + errors_replayed,
        )

    def entries(self) -> Iterator[CacheEntry]:
        """Every recorded entry in the file (for any model), in recording order; an error entry
        has ``completion=None`` and its message in ``error``."""
        if self.file is None:
            return iter(())
        with self._lock:
            return iter(list(self.file.entries()))

    def count(self) -> int:
        """How many entries the file holds (for any model), error entries included."""
        if self.file is None:
            return 0
        with self._lock:
            return self.file.count()

    def close(self) -> None:
        if self.file is not None:
            with self._lock:
                self.file.close()
