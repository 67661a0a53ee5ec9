"""The progress summary on a clock: a line at least every interval while items run, even when
none finishes (an item of a real local model takes minutes).

A thread, because nothing else wakes then: in a serial session the main thread is inside the
item, and an xdist controller only wakes for a worker's event. It calls ``tick`` only under the
hooks' lock, which pytest's own lines of an item are written under too (``hooks.py``), and
never after ``stop()`` returns: ``stop`` takes the lock, so a tick in flight ends first and
none starts after it. The thread is a daemon and ``stop`` joins it: it ends with the session.

In a serial session the item runs with its output captured: fd 1 is the capture's file, so the
line goes to a copy of the terminal's descriptor taken before (``TerminalCopy``), and pytest's
own writer is left believing what it believed, the line it had open written again below.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable
from typing import IO, Any

ENV = "TOOLPOLICY_PROGRESS_INTERVAL"
JOIN_S = 10.0  # a tick in flight is one write of a line; stop() waits for it at most this long


def interval_from_env(default: float, environ: dict[str, str] | None = None) -> float:
    """The summary's interval: ``TOOLPOLICY_PROGRESS_INTERVAL`` seconds, else ``default``."""
    text = (os.environ if environ is None else environ).get(ENV, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise ValueError(f"{ENV} must be a positive number of seconds, not {text!r}")
    return value


class Ticker:
    def __init__(self, tick: Callable[[], float | None], lock: threading.RLock) -> None:
        """``tick`` writes a line when one is due and gives the seconds to its next call, or
        None to stop; it is called holding ``lock``."""
        self._tick = tick
        self._lock = lock
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, delay: float) -> None:
        self._thread = threading.Thread(
            target=self._run, args=(delay,), name="toolpolicy-progress", daemon=True
        )
        self._thread.start()

    def _run(self, delay: float) -> None:
        while not self._stopped.wait(delay):
            with self._lock:
                if self._stopped.is_set():
                    return
                next_delay = self._tick()
            if next_delay is None:
                return
            delay = next_delay

    def stop(self) -> None:
        with self._lock:
            self._stopped.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(JOIN_S)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()


class TerminalCopy:
    """A descriptor of the terminal that an item's output capture does not redirect, for lines
    written while an item runs. Made while nothing is captured (after collection)."""

    def __init__(self, stream: IO[str] | Any = None) -> None:
        stream = sys.stdout if stream is None else stream
        self.encoding = getattr(stream, "encoding", None) or "utf-8"
        self.fd: int | None = None
        with contextlib.suppress(AttributeError, OSError, ValueError):
            self.fd = os.dup(stream.fileno())  # none when stdout is not a file (in-process runs)

    def write(self, text: str, writer: Any) -> bool:
        """``text`` on lines of its own, below the line ``writer`` (pytest's terminal writer)
        has open, which is written again below it, so the terminal shows what the writer
        believes; False when there is no descriptor."""
        if self.fd is None:
            return False
        width = writer.width_of_current_line
        # pytest's writer keeps the open line's text; where it does not, keep its width.
        open_line = getattr(writer, "_current_line", None)
        if not isinstance(open_line, str) or len(open_line) != width:
            open_line = " " * width
        data = ("\n" if width else "") + text + "\n" + open_line
        view = memoryview(data.encode(self.encoding, errors="replace"))
        while view:
            view = view[os.write(self.fd, view) :]
        return True

    def close(self) -> None:
        if self.fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = None
