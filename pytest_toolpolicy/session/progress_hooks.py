"""The live progress of an A/B session, on the controller (or in a serial session): a line per
finished item with ``-v``, the running summary at every tenth of the items and on a clock while
items run (``ticker.py``), and the final summary at the end of the run loop. An item waiting
for another process's lock on its directory says so at once, and in every summary while it
waits: the clock reads the waiting notes its session's processes leave (``run/itemdir.py``) on
this machine's disk (a remote worker's wait shows only when its item fails, naming the holder).

pytest's own lines of an item (its start, its result, its end) are written holding ``lock``,
and so is every progress line, so the clock's thread never writes into the middle of one.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Generator
from typing import Any

import pytest

from .item_run import ROW_PROPERTY
from .progress import INTERVAL_S, WAIT_POLL_S, Progress, level_for
from .progress_lines import item_nodes, row_in
from .session import ABSession
from .ticker import TerminalCopy, Ticker, interval_from_env

ITEM_FIXTURE = "toolpolicy_item"


def progress_hooks(session: ABSession) -> ProgressHooks | None:
    """The controller's progress, or None when there is none to show (``-qq``, a worker).
    A bad ``TOOLPOLICY_PROGRESS_INTERVAL`` is a usage error."""
    level = level_for(session.config.option.verbose)
    if session.is_worker or level == "off":
        return None
    try:
        interval = interval_from_env(INTERVAL_S)
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    return ProgressHooks(session, level, interval)


class ProgressHooks:
    def __init__(self, session: ABSession, level: str, interval: float) -> None:
        self.session = session
        self.level = level
        self.progress = Progress(trial=session.settings.trials > 1, interval=interval)
        self.lock = threading.RLock()
        self.nodes: set[str] = set()  # the node ids of the A/B items this session runs
        self.ticker: Ticker | None = None
        self.terminal: TerminalCopy | None = None

    # -- what runs ---------------------------------------------------------------------------

    @pytest.hookimpl(trylast=True)  # after the environment stage (``environments.py``)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """A serial session's items, after -k and -m."""
        items = [i for i in session.items if ITEM_FIXTURE in getattr(i, "fixturenames", ())]
        self._start({i.nodeid for i in items}, serial=True)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """Under xdist the controller collects nothing: every worker sends the same ids."""
        if self.progress.total is None:
            self._start(item_nodes(ids, [spec.id for spec in self.session.specs()]), serial=False)

    def _start(self, nodes: set[str], *, serial: bool) -> None:
        self.nodes = nodes
        self.progress.start(len(nodes), time.monotonic())
        if serial:  # the item runs with its output captured: write past the capture
            self.terminal = TerminalCopy()
        self.ticker = Ticker(self._tick, self.lock)
        self.ticker.start(min(self.progress.interval, WAIT_POLL_S))

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_logstart(self, nodeid: str) -> Generator[None, object, object]:
        with self.lock:
            result = yield
            if nodeid in self.nodes:
                self.progress.begin(nodeid)
            return result

    @pytest.hookimpl(wrapper=True, tryfirst=True)  # the item's line after pytest's "PASSED"
    def pytest_runtest_logreport(
        self, report: pytest.TestReport
    ) -> Generator[None, object, object]:
        with self.lock:
            result = yield
            # Past its call (or a setup that failed or skipped) an item writes nothing more
            # until its end: pytest may hold what it wrote unflushed, so no line on the clock.
            if report.when == "call" or not report.passed:
                self.progress.end(report.nodeid)
            if report.when == "call":
                self._progress(report)
            return result

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_logfinish(self, nodeid: str) -> Generator[None, object, object]:
        with self.lock:
            result = yield
            self.progress.end(nodeid)
            return result

    @pytest.hookimpl(wrapper=True, tryfirst=True)  # outermost: after pytest's own "[100%]"
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        try:
            return (yield)
        finally:
            self.stop()  # no line on the clock after this one
            if self.level != "off" and self.progress.rows:
                self._progress(None)

    def stop(self) -> None:
        if self.ticker is not None:
            self.ticker.stop()
        if self.terminal is not None:
            self.terminal.close()

    # -- the lines ---------------------------------------------------------------------------

    def _tick(self) -> float | None:
        """On the clock's thread, holding the lock: a line for each item that began waiting for
        another process's lock, the summary when one is due, and the seconds to the next look
        (at most ``WAIT_POLL_S``: a wait is said at once; None: progress is off)."""
        try:
            now = time.monotonic()
            if self.level == "off":
                return None
            waits = {w.item: w.describe() for w in self.session.waiting()}
            if said := self.progress.wait(waits):
                self._write_now(said)
            if self.progress.tick_due(now):
                self._write_now([self.progress.summary(now)])
            delay = min(self.progress.next_tick(now), WAIT_POLL_S)
            return delay if delay > 0 else min(1.0, self.progress.interval)  # due, none running
        except Exception as exc:
            self.level = "off"
            self._write_now([f"toolpolicy progress: off ({type(exc).__name__}: {exc})"])
            return None

    def _progress(self, report: pytest.TestReport | None) -> None:
        """The item's line (``-v``) and the running summary when one is due; with no report,
        the final summary. Progress is a view: a row it cannot read turns it off, saying why,
        and the session goes on."""
        try:
            now = time.monotonic()
            if report is None:
                self._write([self.progress.summary(now, final=True)], last=True)
                return
            row = row_in(report.user_properties, ROW_PROPERTY)
            if row is None or self.level == "off":
                return
            line = self.progress.add(row)
            lines = [line] if self.level == "items" else []
            if self.progress.due(now, steps=self.level == "summary"):
                lines.append(self.progress.summary(now))
            self._write(lines)
        except Exception as exc:
            self.level = "off"
            self._write([f"toolpolicy progress: off ({type(exc).__name__}: {exc})"], last=True)

    def _write_now(self, lines: list[str]) -> None:
        """A line while an item may be running: past the output capture in a serial session
        (where pytest's writer would write into the item's captured output), else through
        pytest's writer, as every other line."""
        reporter = self.session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None or not lines:
            return
        writer = self.session.config.get_terminal_writer()
        if self.terminal is None or not self.terminal.write("\n".join(lines), writer):
            self._write(lines)

    def _write(self, lines: list[str], *, last: bool = False) -> None:
        """Through the terminal reporter, on lines of their own, leaving its state as pytest
        had it: a line it left open for the next writer to end (``-v``'s "PASSED [ 50%]",
        marked -2) stays open, and after dots the next dot starts a line, without a blank one
        or the file name again. The ``last`` line is ended."""
        reporter = self.session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None or not lines:
            return
        before = reporter.currentfspath
        reporter.ensure_newline()
        if self.session.config.get_terminal_writer().width_of_current_line:
            reporter.write("\n")  # xdist's dots leave their line open without marking it
        text = "\n".join(lines)
        reporter.write(text if before == -2 and not last else text + "\n", flush=True)
        reporter.currentfspath = None if last else before
