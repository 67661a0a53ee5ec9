"""The A/B session's pytest hooks, registered only when ``--toolpolicy`` is on."""

from __future__ import annotations

import time
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .progress import Progress, count_items, level_for, row_in
from .row import ItemSpec
from .schema import item_of
from .session import RECORD_PROPERTY, ROW_PROPERTY, ABSession


@dataclass
class ItemHandle:
    spec: ItemSpec
    session: ABSession
    node: pytest.Item

    def run(self) -> dict[str, Any]:
        return self.session.run(self.spec, self.node)


SHIPPED_NODE = "toolpolicy"


class ABHooks:
    def __init__(self, session: ABSession) -> None:
        self.session = session
        self.progress = Progress(trial=session.settings.trials > 1)
        self.level = level_for(session.config.option.verbose)

    @pytest.hookimpl(tryfirst=True)  # before -k, -m and --lf select among the items
    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        """The shipped items, unless the project brings its own (a test that uses the
        ``toolpolicy_item`` fixture) or the command line names what to run (``pytest
        tests/test_x.py`` runs that file, as pytest always does). Collected under the fixed
        node id ``toolpolicy``, so ids are the same wherever the package is installed."""
        if config.args_source == pytest.Config.ArgsSource.ARGS:
            return
        if any("toolpolicy_item" in getattr(item, "fixturenames", ()) for item in items):
            return
        from . import items as shipped

        module = pytest.Module.from_parent(
            session, path=Path(shipped.__file__), nodeid=SHIPPED_NODE
        )
        items.extend(session.genitems(module))

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not self.session.is_worker:  # after -k and -m: the A/B items this session runs
            total = sum("toolpolicy_item" in getattr(i, "fixturenames", ()) for i in session.items)
            self.progress.start(total, time.monotonic())

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """Under xdist the controller collects nothing: every worker sends the same ids."""
        if self.progress.total is None:
            spec_ids = [spec.id for spec in self.session.specs()]
            self.progress.start(count_items(ids, spec_ids), time.monotonic())

    @pytest.hookimpl(trylast=True)  # after the terminal reporter has written the item's result
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not self.session.is_worker:  # the controller sees every worker's reports
            self.session.collect(report)
            if report.when == "call" and self.level != "off":
                self._progress(report)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item) -> Generator[None, Any, Any]:
        """A worker's record travels once, in the call phase's report: off the item after it,
        so the teardown's report (which JUnit XML reads) does not carry it again."""
        report = yield
        if self.session.is_worker and report.when == "call":
            item.user_properties[:] = [p for p in item.user_properties if p[0] != RECORD_PROPERTY]
        return report

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """Each xdist worker's handover (``handover.py``), before it starts."""
        from .handover import KEY

        node.workerinput[KEY] = self.session.handover_for_workers().to_input()

    @pytest.hookimpl(wrapper=True, tryfirst=True)  # outermost: after pytest's own "[100%]"
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        try:
            return (yield)
        finally:
            if not self.session.is_worker and self.level != "off" and self.progress.rows:
                self._progress(None)

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
            if row is None:
                return
            line = self.progress.add(row)
            lines = [line] if self.level == "items" else []
            if self.progress.due(now, steps=self.level == "summary"):
                lines.append(self.progress.summary(now))
            self._write(lines)
        except Exception as exc:
            self.level = "off"
            self._write([f"toolpolicy progress: off ({type(exc).__name__}: {exc})"], last=True)

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

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        ab = self.session
        ab.close()
        if ab.is_worker or not ab.rows:
            return
        from .report import finish

        results = ab.results()
        ids = [item_of(r) for _, r in results.iterrows()]
        report = ab.settings.report
        done = finish(
            results,
            ab.meta(),
            ab.trajectories(ids),
            report,
            gate=ab.settings.gate,
            instances=ab.loaded().instances,
            view=ab.settings.view,
        )
        ab.summary, ab.gate_failed, ab.write_error = done.lines, done.gate_failed, done.write_error
        ab.viewer = done.viewer
        if (ab.gate_failed or ab.write_error or ab.save_errors) and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        ab = self.session
        if ab.is_worker or ab.config.option.collectonly:  # nothing ran, by request
            return
        if not ab.rows:  # e.g. every item deselected with -k
            terminalreporter.write_line(
                "toolpolicy: no A/B item ran (toolpolicy::test_instance[...] items, or your own"
                " tests that use the toolpolicy_item fixture)",
                yellow=True,
            )
            return
        terminalreporter.write_sep("─", "toolpolicy decision")
        for line in ab.summary:
            terminalreporter.write_line(line)
        if ab.write_error:
            terminalreporter.write_line(f"toolpolicy: {ab.write_error}", red=True)
        for error in ab.save_errors:  # its row and trajectory are in the report all the same
            terminalreporter.write_line(f"toolpolicy: {error}", red=True)
        if ab.gate_failed:
            terminalreporter.write_line(f"toolpolicy gate: FAILED — {ab.gate_failed}", red=True)
        if ab.viewer:  # last, where the eye lands when the run ends
            terminalreporter.write_line(f"toolpolicy {ab.viewer}", bold=True)
