"""Model backends by the name a spec starts with: one record each, its module imported only when
a spec names it (as mini-swe-agent's model mapping).

- ``openai:<model>``: any OpenAI-compatible endpoint (``openai_model.py``);
- ``local:<name|file.gguf>``: llama.cpp's server on this machine (``local/model.py``);
- ``scripted:<file>``: replies from a JSON-lines file (``scripted.py``);
- ``sim``, ``sim:<profile-or-file>``: the fault-injecting simulator (``sim/backend.py``).

A backend's module has ``build(arg, options) -> Model`` and, where a spec can be checked before
anything runs, ``check(arg)`` (a ``ValueError`` naming what is wrong; it builds no client and
reaches no network). A new backend is its file and one record in ``BACKENDS``. The
record/replay cache (``cache.py``) is a wrapper around any of them (``spec.build_model``), not
a backend.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..bench.instance import Instance
    from .base import Model
    from .prices import PriceTable


@dataclass(frozen=True)
class BuildOptions:
    """What a backend may be built with; each takes what it needs."""

    base_url: str | None = None  # an endpoint's (openai, local)
    api_key_env: str | None = None  # the variable holding its key (openai), read at each call
    prices: PriceTable | None = None  # None: the shipped table (openai)
    timeout: float = 60
    max_retries: int = 4
    instances: Mapping[str, Instance] | None = None  # what the simulator is asked about
    seed: int = 0  # the simulator's


@dataclass(frozen=True)
class Backend:
    build: str  # "module:function", (arg, BuildOptions) -> Model
    forms: tuple[str, ...]  # how a spec names it, for the messages
    what: str  # what follows ``name:`` ("model", "file", "profile")
    check: str | None = None  # "module:function", (arg) -> None
    bare: bool = False  # the name alone is a spec too (its arg None)
    replayed: bool = False  # a replay needs none of it: its recording answers, by ``name:arg``

    def builder(self) -> Callable[[str | None, BuildOptions], Model]:
        return _load(self.build)

    def checker(self) -> Callable[[str | None], None] | None:
        return _load(self.check) if self.check else None


BACKENDS: dict[str, Backend] = {
    "openai": Backend(
        "pytest_toolpolicy.models.openai_model:build", ("openai:<model>",), "model", replayed=True
    ),
    "local": Backend(
        "pytest_toolpolicy.models.local.model:build",
        ("local:gemma3-270m", "local:<file.gguf>"),
        "model",
        check="pytest_toolpolicy.models.local.model:check",
        replayed=True,
    ),
    "scripted": Backend(
        "pytest_toolpolicy.models.scripted:build",
        ("scripted:<file>",),
        "file",
        check="pytest_toolpolicy.models.scripted:check",
    ),
    "sim": Backend(
        "pytest_toolpolicy.models.sim.backend:build",
        ("sim", "sim:<profile-or-file>"),
        "profile",
        check="pytest_toolpolicy.models.sim.backend:check",
        bare=True,
    ),
}


def accepted_forms() -> str:
    return ", ".join(form for backend in BACKENDS.values() for form in backend.forms)


def _load(path: str) -> Any:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)
