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
"""

from __future__ import annotations

import json
import traceback
import uuid
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import pytest

from .. import jsonsafe
from ..bench.eligible import runnable_here
from ..bench.gold import GOLD_DIR
from ..bench.load import DatasetError, LoadResult, load_instances
from ..bench.sampling import describe
from ..models.base import Model
from ..paths import cache_dir, write_atomic
from ..policy.config import PolicyConfig
from ..primitives.sandbox import Sandbox
from ..types import Trajectory
from .bandit import BanditStore
from .candidates import candidate_line
from .confinement import SandboxRefused, session_sandbox
from .handover import TOKEN_FILE, Handover
from .item import Harness, run_item
from .itemdir import Waiting, report_root, waiting_notes
from .memo import ExecutionMemo
from .row import ItemSpec, error_row
from .schema import item_of
from .settings import Settings
from .store import ItemStore, ReportDirError, ReportDirTaken, claim, prepare

if TYPE_CHECKING:  # the controller builds the table; a worker never imports pandas (~1 s)
    import pandas as pd

ROW_PROPERTY = "toolpolicy_row"
# A finished item's whole record, sent only when the worker could not save it to disk.
RECORD_PROPERTY = "toolpolicy_record"


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

    def _finished(self, item_id: str) -> dict[str, Any] | None:
        """An item an earlier session finished (``--toolpolicy-resume``): its row and attempt."""
        if self.handover is not None:
            return self.handover.resumed.get(item_id)
        return self.store.load(item_id)

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
        """Where this session's items run: one directory per report directory (``itemdir.py``),
        the controller's on a worker too."""
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

    # -- one item ---------------------------------------------------------------------------

    def run(self, spec: ItemSpec, node: pytest.Item) -> dict[str, Any]:
        if self.settings.resume and (record := self._finished(spec.id)) is not None:
            row = {**record["row"], "resumed": True}
            self._ship(node, row, record.get("attempt"))
            return row
        if self.unusable is not None:
            row, trajectory, failure = self._unusable(spec)
        else:
            row, trajectory, failure = self._measure(spec)
        row, problems = self._finish(spec, node, row, trajectory)
        problems = [p for p in (failure, *problems) if p]
        if problems:  # the row is with the controller already: failing loses nothing
            pytest.fail(jsonsafe.escape("; ".join(problems)), pytrace=False)
        if row["status"] == "infra_error":  # the instance cannot be graded here: not a failure
            pytest.skip(jsonsafe.escape(f"{spec.id}: {row['error']}"))
        return row

    def _unusable(self, spec: ItemSpec) -> tuple[dict[str, Any], Trajectory | None, str | None]:
        import socket

        reason = (
            f"worker {self.worker_id} on {socket.gethostname()} cannot run items: {self.unusable}"
        )
        return (
            error_row(spec, self.row_meta, f"harness fault: {reason}"),
            None,
            f"{spec.id}: {reason}",
        )

    def _measure(self, spec: ItemSpec) -> tuple[dict[str, Any], Trajectory | None, str | None]:
        """(row, trajectory, why the item fails). A harness fault, ``HarnessFault`` from a tool
        included, is the item's: recorded with its traceback, and the session goes on."""
        try:
            row, trajectory = run_item(spec, self.harness())
        except Exception as exc:
            reason = f"{type(exc).__name__}: {exc}"
            row = error_row(spec, self.row_meta, f"harness fault: {reason}")
            row["traceback"] = traceback.format_exc(limit=-12)
            return row, None, f"harness fault in {spec.id}: {reason}"
        if row["status"] == "model_error":  # the endpoint failed: measured, and reported
            return row, trajectory, f"{spec.id}: {row['error']}"
        return row, trajectory, None

    def _finish(
        self, spec: ItemSpec, node: pytest.Item, row: dict[str, Any], trajectory: Trajectory | None
    ) -> tuple[dict[str, Any], list[str]]:
        """Ship the row to the controller, then save the record. (row as shipped, problems)."""
        attempt = uuid.uuid4().hex
        problems: list[str] = []
        try:
            text = self.store.encode(spec.id, row, trajectory, attempt)
        except Exception as exc:  # beyond even jsonsafe: nothing of it can be kept or measured
            reason = f"its result could not be serialized: {type(exc).__name__}: {exc}"
            row = error_row(spec, self.row_meta, reason)
            text = self.store.encode(spec.id, row, None, attempt)
            problems.append(f"{spec.id}: {reason}")
        # Before the save: a disk that is full or read-only costs the file, never the row.
        self._ship(node, row, attempt)
        if self.is_worker:  # the controller saves it (this worker may share no disk with it)
            node.user_properties.append((RECORD_PROPERTY, text))
            return row, problems
        try:
            self.store.write(spec.id, text)
        except OSError as exc:
            node.user_properties.append((RECORD_PROPERTY, text))  # the trajectory, by report
            path = self.store.path(spec.id)
            problems.append(f"{spec.id}: could not save its result to {path}: {exc}")
        return row, problems

    def _ship(self, node: pytest.Item, row: dict[str, Any], attempt: str | None) -> None:
        node.user_properties.append(
            (ROW_PROPERTY, jsonsafe.dumps({"row": row, "attempt": attempt}))
        )

    def harness(self) -> Harness:
        if self._harness is None:
            self._workdir = self.item_root()
            instances = {i.instance_id: i for i in self.loaded().instances}
            settings = self.settings
            memo = ExecutionMemo(self._memo_path()) if settings.memo else None
            self._harness = Harness(
                instances=instances,
                make_model=_model_factory(settings, instances),
                workdir=self._workdir,
                sandbox=self.sandbox(),
                memo=memo,
                repos=settings.repos,
                tests_visible=settings.tests_visible,
                config=self.candidate,
                gold_dir=GOLD_DIR,
                meta=self.row_meta,
                generation=settings.generation,
                candidates={c.name: c for c in settings.candidates},
                agent=settings.current,
                agent_timeout=settings.agent_timeout,
                bandit=self._bandit_store(),
                lock_wait=settings.lock_wait,
                token=self.token,
            )
        return self._harness

    def _bandit_store(self) -> BanditStore | None:
        """Row 12's state beside the execution memo (shared by the workers sharing its disk),
        where a candidate has a bandit."""
        if not any(c.bandit for c in self.settings.candidates):
            return None
        return BanditStore(self._memo_path().with_suffix(".bandit.sqlite"))

    def _memo_path(self) -> Path:
        if self.handover is not None:
            return self.handover.memo_path()
        return self.settings.report / "memo.sqlite"

    def close(self) -> None:
        if self._harness is not None and self._harness.memo is not None:
            self._harness.memo.close()
        if self._harness is not None and self._harness.bandit is not None:
            self._harness.bandit.close()

    # -- aggregation (controller) -----------------------------------------------------------

    def collect(self, report: pytest.TestReport) -> None:
        for name, value in report.user_properties:
            if not isinstance(value, str):  # ours are JSON text; pytest types them as object
                continue
            if name == ROW_PROPERTY:
                shipped = json.loads(value)
                row = shipped["row"]
                item_id = item_of(row)
                self.rows[item_id] = row
                self.attempts[item_id] = shipped.get("attempt")
            elif name == RECORD_PROPERTY:
                self._save(value)
        # Saved now: the record need not stay on the report (a JUnit XML file, say).
        report.user_properties = [p for p in report.user_properties if p[0] != RECORD_PROPERTY]

    def _save(self, text: str) -> None:
        """A worker's record, saved by the controller; one it cannot save stays in memory
        (its trajectory still reaches the report) and the summary says why."""
        record = json.loads(text)
        try:
            self.store.write(record["item"], text)
        except OSError as exc:
            self.shipped[record["item"]] = record
            self.save_errors.append(
                f"{record['item']}: could not save its result to {self.store.path(record['item'])}: {exc}"
            )

    def results(self) -> pd.DataFrame:
        """This session's rows (resumed ones included), in item order. Without
        ``--toolpolicy-resume`` never an earlier session's leftovers from the report directory;
        with it, the report directory's every record (``earlier``), this session's rows
        replacing those of the same items."""
        from .results import results_frame

        rows = {**self.earlier(), **self.rows} if self.settings.resume else self.rows
        order = {spec.id: n for n, spec in enumerate(self.specs())}
        ordered = sorted(rows.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0]))
        return results_frame(row for _, row in ordered)

    def earlier(self) -> dict[str, dict[str, Any]]:
        """The rows of the report directory's records that this session did not run (a ``-k``
        run leaves the others' as an earlier session wrote them), each marked resumed and tied
        to its record's attempt, so that its trajectory reaches the report too. A file that
        cannot be read is named in ``unreadable`` and left out."""
        if self._earlier is None:
            found, self.unreadable = self.store.rows()
            earlier = {item_id: rec for item_id, rec in found.items() if item_id not in self.rows}
            self._earlier = {
                item_id: {**row, "resumed": True} for item_id, (row, _) in earlier.items()
            }
            self.attempts |= {item_id: attempt for item_id, (_, attempt) in earlier.items()}
        return self._earlier

    def meta(self, results: pd.DataFrame) -> dict[str, Any]:
        """The header's facts. Its instances are those ``results`` measured (an item that ran
        and was graded); those that ran at all and those loaded are given beside them, so a
        ``-k`` run of one item says it measured one instance, not the 25 it loaded."""
        loaded = self.loaded()
        model = self.settings.model
        flags = {i.instance_id: i.underspecified for i in loaded.instances}
        measured = results[results["status"] == "ok"].drop_duplicates("instance_id")
        return {
            "model": model,
            "dataset": self.settings.dataset,
            "n_instances": len(measured),
            "n_underspecified": sum(
                flags.get(iid, _flag(value))
                for iid, value in zip(
                    measured["instance_id"], measured["underspecified"], strict=True
                )
            ),
            "n_instances_run": int(results["instance_id"].nunique()),
            "n_instances_loaded": len(loaded.instances),
            "load_errors": [str(e) for e in loaded.errors],
            "excluded": [
                n.removeprefix("excluded ") for n in loaded.notes if n.startswith("excluded ")
            ],
            # "N repositories: a/x 4, ...", from the measured instances (a -k run says its own)
            "repositories": describe(
                {i.instance_id: i.repo for i in loaded.instances},
                [iid for iid in measured["instance_id"] if iid in flags],
            ),
            "sampling": [n for n in loaded.notes if n.startswith(("sample", "since"))],
            "tests_visible": self.settings.tests_visible,
            "seed": self.settings.seed,
            "is_sim": model == "sim" or model.startswith("sim:"),
            "sim_profile": (model.partition(":")[2] or "default")
            if model.startswith("sim")
            else None,
            "report_dir": str(self.settings.report),
            "ablation_skipped": list(self.skipped_ablations()),
            "memo": self.settings.memo,
            "sandbox": self.sandbox().mode,
            # degraded by the user's own choice, in the words they chose it with
            "sandbox_opt_in": f"{self.settings.sandbox_source}=degraded"
            if self.settings.sandbox == "degraded"
            else None,
            "trials": self.settings.trials,
            "candidates": {
                c.name: candidate_line(c, model, self.settings.generation.logprobs)
                for c in self.settings.candidates
            },
            **self.settings.generation.record(),
        }

    def trajectories(self, ids: list[str]) -> list[dict[str, Any]]:
        """The trajectories of these items' rows: the record written by the same attempt (a
        file an earlier session left, or one whose save failed, is not this row's)."""
        out = []
        for item_id in ids:
            record = self.shipped.get(item_id) or self.store.read(item_id)
            if record is None or record.get("attempt") != self.attempts.get(item_id):
                continue
            if record.get("trajectory"):
                out.append(record["trajectory"])
        return out


def _flag(value: Any) -> bool:
    """A boolean cell of a frame: a numpy bool, or NaN / None / NA where the row lacks it."""
    try:
        return bool(value) and bool(value == value)
    except (TypeError, ValueError):
        return False


def _model_factory(settings: Settings, instances: dict[str, Any]) -> Any:
    """A fresh ``sim`` per item (its prefix-cache estimate is per run), seeded by the session's
    seed plus the item's trial less one; one shared client for a real model, behind the
    record/replay cache when asked (a trial reaches its requests, not the client)."""
    from ..models.prices import load_prices
    from ..models.spec import build_model, parse_model_spec

    spec = parse_model_spec(settings.model)
    cache_file = settings.cache_file or cache_dir() / "completions.sqlite"

    endpoint = settings.endpoint

    def build(trial: int = 1) -> Model:
        return build_model(
            spec,
            base_url=endpoint.base_url,
            api_key_env=endpoint.api_key_env,
            prices=load_prices(endpoint.prices),
            cache_path=cache_file if settings.cache != "off" else None,
            cache_mode=settings.cache,
            timeout=endpoint.timeout_for(settings.model),
            max_retries=endpoint.retries_for(settings.model),
            instances=instances,
            seed=settings.seed + trial - 1,
        )

    if spec.kind == "sim":
        return build
    shared = build()
    return lambda trial: shared
