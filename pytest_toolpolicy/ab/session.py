"""The A/B as a pytest session: items to run, each item's run, and the aggregation.

One object per process. On an xdist worker it runs items; on the controller (or in a serial
session) it collects each item's row from the test report and, at the end, builds the decision
table. A row travels in the report's ``user_properties`` and is kept by item id, so it is
aggregated exactly once however the items were distributed.
"""

from __future__ import annotations

import json
import tempfile
import traceback
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from ..bench.gold import GOLD_DIR
from ..bench.load import DatasetError, LoadResult, load_instances
from ..models.base import Model
from ..paths import cache_dir
from ..policy.config import PolicyConfig
from ..primitives.sandbox import Sandbox, SandboxUnavailable
from ..types import Trajectory
from .item import Harness, run_item
from .memo import ExecutionMemo
from .row import ItemSpec, error_row
from .settings import Settings
from .store import ItemStore

ROW_PROPERTY = "toolpolicy_row"


class ABSession:
    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        self.config = config
        self.settings = settings
        self.is_worker = hasattr(config, "workerinput")
        self.store = ItemStore(settings.report)
        self.candidate = PolicyConfig.from_env(max_turns=settings.max_turns)
        self.rows: dict[str, dict[str, Any]] = {}
        self.summary: list[str] = []
        self.gate_failed: str | None = None
        self._loaded: LoadResult | None = None
        self._harness: Harness | None = None
        self._sandbox: Sandbox | None = None
        self._workdir: Path | None = None
        if not self.is_worker:
            settings.report.mkdir(parents=True, exist_ok=True)
            self.store.sweep()
            if not settings.resume:  # a fresh run: nothing of an earlier one is reused
                self.store.clear()
                for name in ("memo.sqlite", "memo.sqlite-wal", "memo.sqlite-shm"):
                    (settings.report / name).unlink(missing_ok=True)

    # -- what to run ------------------------------------------------------------------------

    def loaded(self) -> LoadResult:
        if self._loaded is None:
            try:
                self._loaded = load_instances(
                    self.settings.dataset, sample=self.settings.sample, seed=self.settings.seed
                )
            except (DatasetError, ValueError) as exc:
                raise pytest.UsageError(
                    f"--toolpolicy-dataset {self.settings.dataset}: {exc}"
                ) from None
        return self._loaded

    def sandbox(self) -> Sandbox:
        if self._sandbox is None:
            try:
                self._sandbox = Sandbox.select(self.settings.sandbox)
            except SandboxUnavailable as exc:
                raise pytest.UsageError(f"--toolpolicy-sandbox=require: {exc}") from None
        return self._sandbox

    def ablated(self) -> tuple[str, ...]:
        """The gates to ablate that the candidate has on (ablating an off gate changes nothing)."""
        return tuple(g for g in self.settings.ablate if self.candidate.on(g))

    def skipped_ablations(self) -> tuple[str, ...]:
        return tuple(g for g in self.settings.ablate if not self.candidate.on(g))

    def specs(self) -> list[ItemSpec]:
        out: list[ItemSpec] = []
        for instance in self.loaded().instances:
            out += [ItemSpec(instance.instance_id, arm) for arm in self.settings.arms]
            if "policy" in self.settings.arms:
                out += [ItemSpec(instance.instance_id, "policy", g) for g in self.ablated()]
        return out

    # -- one item ---------------------------------------------------------------------------

    def run(self, spec: ItemSpec, node: pytest.Item) -> dict[str, Any]:
        if self.settings.resume and (record := self.store.load(spec.id)) is not None:
            row = {**record["row"], "resumed": True}
            node.user_properties.append((ROW_PROPERTY, json.dumps(row, default=str)))
            return row
        harness = self.harness()
        try:
            row, trajectory = run_item(spec, harness)
        except Exception as exc:  # a harness fault: recorded, and the item fails with it
            reason = f"{type(exc).__name__}: {exc}"
            row = error_row(spec, harness.meta, reason)
            row["traceback"] = traceback.format_exc(limit=8)
            self._finish(spec, node, row, None)
            pytest.fail(f"harness fault in {spec.id}: {reason}", pytrace=False)
        if row["status"] != "ok":  # a model error: nothing was measured
            self._finish(spec, node, row, trajectory)
            pytest.fail(f"{spec.id}: {row['error']}", pytrace=False)
        self._finish(spec, node, row, trajectory)
        return row

    def _finish(
        self, spec: ItemSpec, node: pytest.Item, row: dict[str, Any], trajectory: Trajectory | None
    ) -> None:
        self.store.save(spec.id, row, trajectory)
        node.user_properties.append((ROW_PROPERTY, json.dumps(row, default=str)))

    def harness(self) -> Harness:
        if self._harness is None:
            self._workdir = Path(tempfile.gettempdir()) / "toolpolicy-ab"
            instances = {i.instance_id: i for i in self.loaded().instances}
            settings = self.settings
            memo = ExecutionMemo(settings.report / "memo.sqlite") if settings.memo else None
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
                meta={"seed": settings.seed, "dataset": settings.dataset, "model": settings.model},
            )
        return self._harness

    def close(self) -> None:
        if self._harness is not None and self._harness.memo is not None:
            self._harness.memo.close()

    # -- aggregation (controller) -----------------------------------------------------------

    def collect(self, report: pytest.TestReport) -> None:
        for name, value in report.user_properties:
            if name == ROW_PROPERTY:
                row = json.loads(value)
                self.rows[f"{row['instance_id']}-{row['variant']}"] = row

    def results(self) -> pd.DataFrame:
        order = {spec.id: n for n, spec in enumerate(self.specs())}
        rows = sorted(self.rows.items(), key=lambda kv: order.get(kv[0], len(order)))
        return pd.DataFrame([row for _, row in rows])

    def meta(self) -> dict[str, Any]:
        loaded = self.loaded()
        model = self.settings.model
        return {
            "model": model,
            "dataset": self.settings.dataset,
            "n_instances": len(loaded.instances),
            "n_underspecified": sum(i.underspecified for i in loaded.instances),
            "load_errors": [str(e) for e in loaded.errors],
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
        }

    def trajectories(self, ids: list[str]) -> list[dict[str, Any]]:
        out = []
        for item_id in ids:
            try:
                record = json.loads(self.store.path(item_id).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if record.get("trajectory"):
                out.append(record["trajectory"])
        return out


def _model_factory(settings: Settings, instances: dict[str, Any]) -> Any:
    """A fresh ``sim`` per item (its prefix-cache estimate is per run); one shared client for a
    real model, behind the record/replay cache when asked."""
    from ..models.spec import build_model, parse_model_spec

    spec = parse_model_spec(settings.model)
    cache_file = settings.cache_file or cache_dir() / "completions.sqlite"

    def build() -> Model:
        return build_model(
            spec,
            cache_path=cache_file if settings.cache != "off" else None,
            cache_mode=settings.cache,
            instances=instances,
            seed=settings.seed,
        )

    if spec.kind == "sim":
        return build
    shared = build()
    return lambda: shared
