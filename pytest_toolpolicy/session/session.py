"""The A/B as a pytest session: items to run, each item's run, and the aggregation.

One object per process. On an xdist worker it runs items; on the controller (or in a serial
session) it collects each item's row from the test report and, at the end, builds the decision
table. A row travels in the report's ``user_properties`` and is kept by item id, so it is
aggregated exactly once however the items were distributed.

No finished result is lost: a row is handed to the report before its record is saved (a full
or read-only disk fails the item, and the row still reaches the table, its record with it),
and a session deletes nothing on start, so ``-k``, ``--collect-only`` or a rerun leave every
other item's record as it was. The report is built from this session's rows alone, or, with
``--toolpolicy-resume``, from every record of the report directory with this session's rows in
place of those of the same items (so a resumed ``-k`` run reports the whole A/B); the
``attempt`` id in a row and its record ties the two together.

Only the controller writes the report directory. A worker sends each record with its row in
the test report, so workers on other machines (xdist's ``--tx socket=``/``ssh=``), which share
no disk with the controller, lose nothing; what else a worker needs comes in its handover
(``handover.py``).

The items' environments are a stage before the items (``environments.py``): resolved once per
process that runs items (the controller builds them first under xdist), and handed to each item
in its ``Harness``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import pytest

from ..bench.load import DatasetError, LoadResult, load_instances
from ..decide.variants import ItemSpec
from ..envs.eligible import runnable_here
from ..envs.stage import Resolved
from ..paths import write_atomic
from ..policy.config import PolicyConfig
from ..primitives.sandbox import Sandbox
from ..run.item import Harness
from ..run.itemdir import Waiting, report_root, waiting_notes
from .collect import collect, earlier_rows, results_of, trajectories_of
from .confinement import SandboxRefused, session_sandbox
from .environments import resolve as resolve_stage
from .handover import TOKEN_FILE, Handover
from .harness import build_harness
from .header_facts import header_facts
from .item_run import RECORD_PROPERTY, ROW_PROPERTY, run_in_session
from .settings import Settings
from .store import ItemStore, ReportDirError, ReportDirTaken, claim, prepare

if TYPE_CHECKING:  # the controller builds the table; a worker never imports pandas (~1 s)
    import pandas as pd

__all__ = ["RECORD_PROPERTY", "ROW_PROPERTY", "ABSession"]


class ABSession:
    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        self.config = config
        self.settings = settings
        self.is_worker = hasattr(config, "workerinput")
        workerinput = getattr(config, "workerinput", {})
        self.handover = Handover.from_input(workerinput) if self.is_worker else None
        self.worker_id = str(workerinput.get("workerid", ""))
        self.token = self.handover.token if self.handover else uuid.uuid4().hex
        # Why this worker cannot run items (its dataset, sandbox or model is missing here):
        # each of its items fails with it, and the session goes on on the other workers.
        self.unusable: str | None = None
        self.store = ItemStore(settings.report)
        self.candidate = PolicyConfig.from_env(max_turns=settings.max_turns)
        self.rows: dict[str, dict[str, Any]] = {}
        self.attempts: dict[str, str | None] = {}  # item id -> the attempt its row came from
        self.shipped: dict[str, dict[str, Any]] = {}  # records the controller could not save
        self.save_errors: list[str] = []  # the controller's failed saves, for the summary
        self.summary: list[str] = []
        self.gate_failed: str | None = None
        self.write_error: str | None = None
        self.viewer: str | None = None  # where the viewer's index is, or why there is none
        self.row_meta = {
            "seed": settings.seed,
            "dataset": settings.dataset,
            "model": settings.model,
        }
        self._loaded: LoadResult | None = None
        self._harness: Harness | None = None
        self._sandbox: Sandbox | None = None
        self._workdir: Path | None = None
        self._item_root: Path | None = None
        self._lock: IO[str] | None = None
        self._handover_out: Handover | None = None
        self._earlier: dict[str, dict[str, Any]] | None = None
        self.unreadable: list[str] = []  # record files of the report directory left unread
        self._environments: dict[str, Resolved] | None = None
        self.collected: list[ItemSpec] | None = None  # a worker's items, for its stage

    def open(self) -> None:
        """The controller's hold on the report directory, at configure: created, writable and
        this session's alone, or a usage error. No result is removed: an earlier session's items
        stay until the same item runs again (only the execution memo, a cache, starts afresh
        without ``--toolpolicy-resume``). ``--collect-only`` touches nothing on disk."""
        if self.is_worker or self.config.option.collectonly:
            return
        report = self.settings.report
        try:
            prepare(report)
            self._lock = claim(report)
        except ReportDirTaken as exc:  # two sessions would overwrite each other's items
            raise pytest.UsageError(
                f"--toolpolicy-report {report}: {exc}; wait for it to finish, or give this"
                " session a report directory of its own with --toolpolicy-report DIR"
            ) from None
        except ReportDirError as exc:
            raise pytest.UsageError(f"--toolpolicy-report {report}: {exc}") from None
        self.store.sweep()  # safe now: no other session writes here
        # A worker that reads this token here shares the controller's disk (handover.py).
        write_atomic(report / TOKEN_FILE, lambda p: p.write_text(self.token, encoding="utf-8"))
        if not self.settings.resume:
            # The memo is a cache, not a result: a fresh run re-executes what it measures, so
            # its counts of tool executions are its own (two runs print the same table).
            for name in ("memo.sqlite", "memo.sqlite-wal", "memo.sqlite-shm"):
                (report / name).unlink(missing_ok=True)

    def release(self) -> None:
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    # -- what to run ------------------------------------------------------------------------

    def loaded(self) -> LoadResult:
        if self._loaded is None:
            try:
                self._loaded = load_instances(
                    self.settings.dataset,
                    sample=self.settings.sample,
                    seed=self.settings.seed,
                    exclude=runnable_here(self.settings.repos),
                    strata=self.settings.strata,
                    since=self.settings.since,
                )
            except (DatasetError, ValueError) as exc:
                raise pytest.UsageError(
                    f"--toolpolicy-dataset {self.settings.dataset}: {exc}"
                ) from None
        return self._loaded

    def instance_ids(self) -> list[str]:
        """The instances to run: a worker takes the controller's list, so that every worker
        collects the same items whether or not it can load the dataset itself."""
        if self.handover is not None:
            return list(self.handover.instance_ids)
        return [i.instance_id for i in self.loaded().instances]

    def handover_for_workers(self) -> Handover:
        """What each worker is handed (``pytest_configure_node``): made once, for all."""
        if self._handover_out is None:
            self._handover_out = self._make_handover()
        return self._handover_out

    def _make_handover(self) -> Handover:
        import os

        from ..models.local.model import URL_ENV

        resumed = {}
        if self.settings.resume:
            for spec in self.specs():
                if (record := self.store.load(spec.id)) is not None:
                    resumed[spec.id] = {"row": record["row"], "attempt": record.get("attempt")}
        return Handover(
            instance_ids=self.instance_ids(),
            report=str(self.settings.report.resolve()),
            token=self.token,
            resumed=resumed,
            local_url=os.environ.get(URL_ENV),
        )

    def sandbox(self) -> Sandbox:
        """Fail closed (``confinement.py``): a real model's or an external agent's session
        without bubblewrap is a usage error unless degraded was asked for by name."""
        if self._sandbox is None:
            try:
                self._sandbox = session_sandbox(self.settings)
            except SandboxRefused as exc:
                raise pytest.UsageError(str(exc)) from None
        return self._sandbox

    def item_root(self) -> Path:
        """Where this session's items run: one directory per report directory
        (``run/itemdir.py``), the controller's on a worker too."""
        if self._item_root is None:
            report = self.settings.report.resolve()
            if self.handover is not None:
                report = Path(self.handover.report)
            self._item_root = report_root(self.settings.workdir, report)
        return self._item_root

    def waiting(self) -> list[Waiting]:
        """This session's items waiting for another process's lock (on this machine's disk)."""
        return waiting_notes(self.item_root(), self.token)

    def ablated(self) -> tuple[str, ...]:
        """The gates to ablate that the candidate has on (ablating an off gate changes nothing)."""
        return tuple(g for g in self.settings.ablate if self.candidate.on(g))

    def skipped_ablations(self) -> tuple[str, ...]:
        return tuple(g for g in self.settings.ablate if not self.candidate.on(g))

    def specs(self) -> list[ItemSpec]:
        """Each instance's items: per trial (numbered only when there are several), the arms,
        then the candidates and the ablations of the policy."""
        k = self.settings.trials
        out: list[ItemSpec] = []
        for iid in self.instance_ids():
            for trial in range(1, k + 1) if k > 1 else (None,):
                out += [ItemSpec(iid, arm, trial=trial) for arm in self.settings.arms]
                if "policy" in self.settings.arms:
                    out += [
                        ItemSpec(iid, "policy", candidate=c.name, trial=trial)
                        for c in self.settings.candidates
                    ]
                    out += [ItemSpec(iid, "policy", g, trial=trial) for g in self.ablated()]
        return out

    # -- the environment stage (``environments.py``) ------------------------------------------

    def resolve_environments(
        self, specs: Iterable[ItemSpec], say: Callable[[str], object] | None = None
    ) -> None:
        """Resolve the environments of ``specs``' instances, once for this process."""
        if self._environments is None:
            self._environments = resolve_stage(self, specs, say)

    def environments(self) -> Mapping[str, Resolved]:
        """The items' environments: resolved by now (a worker's, at its first item), else for
        every item of the session."""
        self.resolve_environments(self.collected if self.collected is not None else self.specs())
        assert self._environments is not None
        return self._environments

    # -- one item (``item_run.py``) -----------------------------------------------------------

    def run(self, spec: ItemSpec, node: pytest.Item) -> dict[str, Any]:
        return run_in_session(self, spec, node)

    def harness(self) -> Harness:
        if self._harness is None:
            self._workdir = self.item_root()
            self._harness = build_harness(self, self._workdir)
        return self._harness

    def close(self) -> None:
        if self._harness is not None and self._harness.memo is not None:
            self._harness.memo.close()
        if self._harness is not None and self._harness.bandit is not None:
            self._harness.bandit.close()

    # -- aggregation (controller; ``collect.py``, ``header_facts.py``) ------------------------

    def collect(self, report: pytest.TestReport) -> None:
        collect(self, report)

    def results(self) -> pd.DataFrame:
        return results_of(self)

    def earlier(self) -> dict[str, dict[str, Any]]:
        if self._earlier is None:
            self._earlier = earlier_rows(self)
        return self._earlier

    def meta(self, results: pd.DataFrame) -> dict[str, Any]:
        return header_facts(self, results)

    def trajectories(self, ids: list[str]) -> list[dict[str, Any]]:
        return trajectories_of(self, ids)
