"""Event hooks: callbacks run when the store changes.

Events:

- ``set``    — a key was remembered (new or replaced)
- ``forget`` — a key was forgotten explicitly
- ``expire`` — an expired key was dropped (on access or by ``purge_expired``)
- ``evict``  — a key was evicted to make room for another
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

EVENTS = ("set", "forget", "expire", "evict")


@dataclass(frozen=True)
class Event:
    """What happened, to which key of which namespace, and the value involved."""

    name: str
    namespace: str
    key: str
    value: Any


Callback = Callable[[Event], None]


class HookRegistry:
    """Callbacks per event name, run in registration order."""

    def __init__(self) -> None:
        self._handlers: dict[str, dict[int, Callback]] = {name: {} for name in EVENTS}
        self._tokens = itertools.count(1)

    def on(self, event: str, callback: Callback) -> Callable[[], None]:
        """Run ``callback(event)`` on every ``event``; returns a function that unsubscribes it."""
        handlers = self._handlers_for(event)
        token = next(self._tokens)
        handlers[token] = callback

        def unsubscribe() -> None:
            handlers.pop(token, None)

        return unsubscribe

    def emit(self, event: Event) -> None:
        """Run the callbacks registered for ``event.name``.

        Callbacks may subscribe or unsubscribe while the event is being delivered; such
        changes take effect from the next event on.
        """
        for callback in list(self._handlers_for(event.name).values()):
            callback(event)

    def count(self, event: str) -> int:
        """How many callbacks are registered for ``event``."""
        return len(self._handlers_for(event))

    def _handlers_for(self, event: str) -> dict[int, Callback]:
        try:
            return self._handlers[event]
        except KeyError:
            known = ", ".join(EVENTS)
            raise ValueError(f"unknown event {event!r} (known: {known})") from None
