"""The A/B session's pytest hooks, registered only when ``--toolpolicy`` is on (its live
progress is ``progress_hooks.py``)."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from ..decide.variants import item_of
from .environments import item_specs, node_specs, terminal_lines
from .item_run import RECORD_PROPERTY
from .session import ABSession

SHIPPED_NODE = "toolpolicy"


class ABHooks:
    def __init__(self, session: ABSession) -> None:
        self.session = session

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

    # -- the environment stage (``environments.py``) ------------------------------------------

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """A serial session's stage, over the items to run (after -k and -m), before the
        progress clock starts (``progress_hooks.py``'s runs last); a worker's items, for its
        stage before its first item."""
        ab = self.session
        specs = item_specs(session.items)
        if ab.is_worker:
            ab.collected = specs
        elif not ab.config.option.collectonly:
            ab.resolve_environments(specs, terminal_lines(ab.config))

    @pytest.hookimpl(optionalhook=True, tryfirst=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        """The controller's stage, at the first worker's collection: no item is scheduled
        before it ends."""
        ab = self.session
        if not ab.config.option.collectonly:
            ab.resolve_environments(node_specs(ids, ab.specs()), terminal_lines(ab.config))

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> None:
        """A worker's stage, before its first item starts."""
        if self.session.is_worker and self.session.unusable is None:
            self.session.environments()

    @pytest.hookimpl(trylast=True)  # after the terminal reporter has written the item's result
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not self.session.is_worker:  # the controller sees every worker's reports
            self.session.collect(report)

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
            ab.meta(results),
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
        if ab.unreadable:
            names = ", ".join(ab.unreadable[:5]) + (", ..." if len(ab.unreadable) > 5 else "")
            terminalreporter.write_line(
                f"toolpolicy: {len(ab.unreadable)} record(s) in {ab.store.directory} could not"
                f" be read, left out of the report: {names}",
                yellow=True,
            )
        if ab.gate_failed:
            terminalreporter.write_line(f"toolpolicy gate: FAILED — {ab.gate_failed}", red=True)
        if ab.viewer:  # last, where the eye lands when the run ends
            terminalreporter.write_line(f"toolpolicy {ab.viewer}", bold=True)
