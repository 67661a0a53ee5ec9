"""What every item of a session shares (``run/item.py``'s ``Harness``), built once per process
from the session's settings: its instances and their environments (the session's stage,
``environments.py``), a model per item, where items run, the sandbox, the execution memo and the
bandit's state beside it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..bench.gold import GOLD_DIR
from ..models.base import Model
from ..paths import cache_dir
from ..run.bandit import BanditStore
from ..run.item import Harness
from ..run.memo import ExecutionMemo
from .settings import Settings

if TYPE_CHECKING:
    from .session import ABSession


def build_harness(session: ABSession, workdir: Path) -> Harness:
    """The session's ``Harness``, its items run under ``workdir``."""
    instances = {i.instance_id: i for i in session.loaded().instances}
    settings = session.settings
    memo = ExecutionMemo(memo_path(session)) if settings.memo else None
    return Harness(
        instances=instances,
        make_model=model_factory(settings, instances),
        workdir=workdir,
        sandbox=session.sandbox(),
        environments=session.environments(),
        memo=memo,
        repos=settings.repos,
        tests_visible=settings.tests_visible,
        config=session.candidate,
        gold_dir=GOLD_DIR,
        meta=session.row_meta,
        generation=settings.generation,
        candidates={c.name: c for c in settings.candidates},
        agent=settings.current,
        agent_timeout=settings.agent_timeout,
        bandit=bandit_store(session),
        lock_wait=settings.lock_wait,
        token=session.token,
    )


def bandit_store(session: ABSession) -> BanditStore | None:
    """Row 12's state beside the execution memo (shared by the workers sharing its disk),
    where a candidate has a bandit."""
    if not any(c.bandit for c in session.settings.candidates):
        return None
    return BanditStore(memo_path(session).with_suffix(".bandit.sqlite"))


def memo_path(session: ABSession) -> Path:
    if session.handover is not None:
        return session.handover.memo_path()
    return session.settings.report / "memo.sqlite"


def model_factory(settings: Settings, instances: dict[str, Any]) -> Any:
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
