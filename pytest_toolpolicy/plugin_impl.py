"""What the plugin does once a run asks for it: the A/B session's set-up (``--toolpolicy`` or
``--toolpolicy-limits`` given) and the fixtures' bodies. Kept out of ``plugin.py``, the
``pytest11`` entry point, so that loading the plugin into a run that uses none of it imports
(and, when pytest rewrites the plugin's package, parses and compiles) only what registering the
options needs. Nothing here is imported until a hook or a fixture of ``plugin.py`` needs it.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .policy.config import PolicyConfig
    from .policy.loop import PolicyLoop
    from .primitives import Toolbox
    from .session.session import ABSession
    from .session.settings import Settings


def configure(config: pytest.Config, get: Callable[[str], Any], key: pytest.StashKey[Any]) -> None:
    """Start the A/B session the options ask for and register its hooks; ``get`` reads an
    option, its ini key as the fallback."""
    from .session.hooks import ABHooks
    from .session.progress_hooks import progress_hooks
    from .session.session import ABSession
    from .session.settings import SettingsError, limits_from, settings_from

    try:
        _export_limits(config, limits_from(get))
        settings = settings_from(get)
        if settings is not None and settings.gate and settings.mode != "ab":
            raise SettingsError(
                "--toolpolicy-gate decides policy against current: use --toolpolicy=ab"
            )
    except SettingsError as exc:
        raise pytest.UsageError(str(exc)) from None
    if settings is None:
        return
    session = ABSession(config, settings)
    progress = progress_hooks(session)  # the controller's, unless -qq; checked before the rest
    if session.is_worker:
        _prepare_worker(config, settings, session)
    else:
        session.loaded()  # a dataset that cannot load is a usage error, before anything runs
        session.sandbox()  # so is a sandbox that is required and cannot run
        session.open()  # and a report directory that cannot be written, or is another session's
        config.add_cleanup(session.release)
        # Last: the checks above are cheap, and a server takes seconds to start.
        _serve_local_model(config, settings)
    config.stash[key] = session
    config.pluginmanager.register(ABHooks(session), "toolpolicy-ab")
    if progress is not None:
        config.pluginmanager.register(progress, "toolpolicy-progress")
        config.add_cleanup(progress.stop)  # the run loop stops it; this, when none ran


def _prepare_worker(config: pytest.Config, settings: Settings, session: ABSession) -> None:
    """What the controller checked for the session, checked again where this worker runs (on
    another machine it may lack the dataset file, bubblewrap or the model): what is missing
    fails this worker's items with the reason, never the session (``ABSession.unusable``)."""
    try:
        session.loaded()
        session.sandbox()
        _worker_model(config, settings, session)
    except pytest.UsageError as exc:
        session.unusable = str(exc)


def _worker_model(config: pytest.Config, settings: Settings, session: ABSession) -> None:
    """A worker's ``local:`` server: the controller's when this machine reaches it (a local
    worker inherits its address), else one of its own for the session."""
    if not settings.model.startswith("local:") or settings.cache == "replay":
        return
    if settings.endpoint.base_url:
        return
    from .models.local.model import URL_ENV
    from .session.handover import reachable

    if os.environ.get(URL_ENV):
        return
    url = session.handover.local_url if session.handover else None
    if url and reachable(url):
        os.environ[URL_ENV] = url

        def forget() -> None:
            os.environ.pop(URL_ENV, None)

        config.add_cleanup(forget)
        return
    _serve_local_model(config, settings)


def _serve_local_model(config: pytest.Config, settings: Settings) -> None:
    """A ``local:`` model's server, started by the process that owns the session (local xdist
    workers inherit its address; ``_worker_model``) and stopped at the session's end, Ctrl-C
    included. A replay needs no server: the recording answers."""
    if not settings.model.startswith("local:") or settings.cache == "replay":
        return
    if settings.endpoint.base_url:  # a server of the user's own
        return
    from .models.local.server import ServerError
    from .models.local.session import start_server, stop_server
    from .models.local.weights import WeightsError

    server_settings = settings.generation.local.server_settings(_xdist_workers(config))
    try:
        server = start_server(settings.model.partition(":")[2], server_settings)
    except (ServerError, WeightsError) as exc:
        raise pytest.UsageError(str(exc)) from None
    config.add_cleanup(lambda: stop_server(server))


def _xdist_workers(config: pytest.Config) -> int:
    """How many xdist workers will ask the server at once (1 without ``-n``): xdist has turned
    ``-n auto`` into a number before any plugin is configured."""
    workers = getattr(config.option, "numprocesses", None)
    return workers if isinstance(workers, int) and workers > 0 else 1


def _export_limits(config: pytest.Config, text: str | None) -> None:
    """Set ``TOOLPOLICY_LIMITS`` for this process (xdist workers get the same option and set
    it too), and put it back at the end, so an in-process run leaves its caller unchanged."""
    if text is None:
        return
    from .limits import ENV

    before = os.environ.get(ENV)
    os.environ[ENV] = text

    def restore() -> None:
        if before is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = before

    config.add_cleanup(restore)


def item(request: pytest.FixtureRequest, session: Any) -> Any:
    from .session.item import ItemHandle

    return ItemHandle(request.param, session, request.node)


def toolbox_factory(tmp_path: Path) -> Callable[[dict[str, str]], Toolbox]:
    from .primitives import Toolbox, Workspace

    def make(files: dict[str, str]) -> Toolbox:
        root = tmp_path / f"workspace{len(list(tmp_path.glob('workspace*')))}"
        for rel, text in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        root.mkdir(exist_ok=True)
        return Toolbox(root, workspace=Workspace.create(root))

    return make


def registry() -> dict[str, dict[str, Any]]:
    from .policy.registry import REGISTRY

    return copy.deepcopy(REGISTRY)


def trust_gate() -> Callable[..., Any]:
    from .policy.config import PolicyConfig
    from .policy.trust import trust_gate as gate

    def check(call: Any, envelope: dict[str, Any], config: PolicyConfig | None = None) -> Any:
        return gate(call, envelope, config or PolicyConfig())

    return check


def loop_factory(toolbox: Callable[[dict[str, str]], Toolbox]) -> Callable[..., PolicyLoop]:
    from .models.scripted import ScriptedModel
    from .policy.loop import PolicyLoop

    def make(files: dict[str, str], model: Any, config: Any = None) -> PolicyLoop:
        if isinstance(model, Sequence) and not isinstance(model, str):
            model = ScriptedModel(list(model))
        return PolicyLoop(toolbox(files), model, config)

    return make
