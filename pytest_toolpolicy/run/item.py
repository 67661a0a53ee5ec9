"""One A/B item: an instance × arm × variant run, graded and measured (``row.py`` turns it
into its results row)."""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..agents.spec import AgentSpec
from ..bench.instance import Instance
from ..decide.variants import ItemSpec
from ..envs.stage import Resolved
from ..models.base import Model
from ..paths import safe_name
from ..policy.config import PolicyConfig
from ..primitives.sandbox import Sandbox
from ..types import Trajectory
from .bandit import BanditStore
from .candidates import Candidate
from .generation import Generation
from .itemdir import LOCK_WAIT_S, held
from .memo import ExecutionMemo
from .pipeline import RunSetup, run_instance
from .row import row_of


@dataclass
class Harness:
    """What every item of a session shares."""

    instances: dict[str, Instance]
    # A model per item (no state leaks between items), given the item's trial (1..K): a
    # simulator's seed moves on with it.
    make_model: Callable[[int], Model]
    workdir: Path
    sandbox: Sandbox
    # The instances' environments, resolved once before any item ran (``envs/stage.py``);
    # bundled instances need none.
    environments: Mapping[str, Resolved] = field(default_factory=dict)
    memo: ExecutionMemo | None = None
    repos: Path | None = None
    tests_visible: bool = True
    config: PolicyConfig = field(default_factory=PolicyConfig)  # the candidate policy
    counterfactual: bool = True
    gold_dir: Path | None = None
    meta: dict[str, Any] = field(default_factory=dict)  # model, seed, dataset: copied to rows
    generation: Generation = field(default_factory=Generation)  # what every request carries
    candidates: dict[str, Candidate] = field(default_factory=dict)  # by name
    agent: AgentSpec | None = None  # who plays the current arm (None: the stock loop)
    agent_timeout: float = 1800.0  # an external agent's wall seconds on one item
    bandit: BanditStore | None = None  # row 12's state, where a candidate has a bandit
    lock_wait: float = LOCK_WAIT_S  # seconds an item waits for its directory's lock
    token: str = ""  # the session's: its waits are shown by its progress line (itemdir.py)


def run_item(spec: ItemSpec, harness: Harness) -> tuple[dict[str, Any], Trajectory]:
    """Runs in ``workdir/<item id>/repo``, the same path every time its report directory runs
    it, held by the item's lock (``itemdir.py``)."""
    directory = harness.workdir / safe_name(spec.id)
    directory.parent.mkdir(parents=True, exist_ok=True)
    with held(directory, item=spec.id, bound=harness.lock_wait, token=harness.token):
        directory.mkdir(exist_ok=True)
        try:
            return _run_item(spec, harness, directory)
        finally:
            shutil.rmtree(directory, ignore_errors=True)


def _run_item(
    spec: ItemSpec, harness: Harness, directory: Path
) -> tuple[dict[str, Any], Trajectory]:
    instance = harness.instances[spec.instance_id]
    config, generation = harness.config, harness.generation
    meta: dict[str, Any] = {
        "seed": harness.meta.get("seed"),
        "dataset": harness.meta.get("dataset"),
    }
    candidate = harness.candidates[spec.candidate] if spec.candidate and not spec.gate else None
    if spec.gate:
        config = config.without(spec.gate)
    elif candidate is not None:
        config = candidate.config(config)
        if candidate.structured:
            generation = dataclasses.replace(generation, structured=candidate.structured)
    pay: Callable[[float | None], None] | None = None
    if candidate is not None and candidate.bandit is not None and harness.bandit is not None:
        store, bandit, name = harness.bandit, candidate.bandit, candidate.name
        arm, seq = store.pick(name, bandit, spec.id)
        config = dataclasses.replace(config, trigger=bandit.trigger(arm))
        meta["bandit"] = {"arm": bandit.arms[arm], "seq": seq}

        def pay(reward: float | None) -> None:
            store.pay(name, bandit, spec.id, reward)

    setup = RunSetup(
        sandbox=harness.sandbox,
        repos=harness.repos,
        tests_visible=harness.tests_visible,
        memo=harness.memo,
        generation=generation,
        counterfactual=harness.counterfactual,
        meta=meta,
        trial=spec.trial,
        agent=harness.agent if spec.arm == "current" else None,
        agent_timeout=harness.agent_timeout,
    )
    try:
        run = run_instance(
            instance,
            spec.arm,
            harness.make_model(spec.trial or 1),
            directory,
            config=config,
            variant=spec.variant,
            setup=setup,
            name="repo",
            env=harness.environments.get(spec.instance_id),
        )
    except BaseException:
        if pay is not None:
            pay(None)  # a harness fault: the pull is taken back, its arm learns nothing
        raise
    row = row_of(run.trajectory, spec, harness.gold_dir, duration_s=run.duration_s)
    if pay is not None:
        # paid by what the run itself shows: resolved; a run that measured nothing pays nothing
        pay(float(bool(row["resolved"])) if row["status"] == "ok" else None)
    return row, run.trajectory
