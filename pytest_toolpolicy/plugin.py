"""The pytest plugin (entry point ``toolpolicy``).

Loading it changes nothing about an ordinary pytest run: it registers no autouse fixture and no
hook that alters collection or reporting until ``--toolpolicy`` (or the ``toolpolicy`` ini key)
turns the A/B on; ``TOOL_POLICY`` in the environment alone never does, since it is the spec's
arm flag and may be set for reasons that have nothing to do with this pytest run. The fixtures
below are inert until a test asks for them by name. The A/B session itself lives in
``ab/session.py``; this file is the glue.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .ab.endpoint import OPTIONS as ENDPOINT_OPTIONS
from .ab.generation import OPTIONS as GENERATION_OPTIONS

if TYPE_CHECKING:  # imported by the fixtures that use them: loading the plugin stays cheap
    from .primitives import Toolbox

_MODE_HELP = (
    "turn the A/B on: current, policy or ab (default off). Bare --toolpolicy runs the arm"
    " TOOL_POLICY=policy|current names, else ab; TOOL_POLICY alone never turns it on. A bare"
    " --toolpolicy before a path takes the path as its value: write --toolpolicy=ab there"
)
# (option, ini key?, help). Every option lives in one group with one prefix (dest = name).
_OPTIONS: tuple[tuple[str, bool, str], ...] = (
    ("--toolpolicy-model", True, "model spec: sim, sim:oracle, sim:FILE.toml, openai:NAME, ..."),
    ("--toolpolicy-dataset", True, "instances: bundled, a local .jsonl/.json/.parquet, a hub id"),
    ("--toolpolicy-repos", True, "directory of local git mirrors for real repositories"),
    ("--toolpolicy-sample", True, "run a seeded sample of N instances"),
    ("--toolpolicy-seed", True, "seed of the sample and of sim (default 0)"),
    ("--toolpolicy-cache", True, "model record/replay cache: off, record, replay"),
    ("--toolpolicy-cache-file", True, "the cache's SQLite file"),
    ("--toolpolicy-report", True, "report directory (default reports/<model>-<dataset>-seed<N>)"),
    ("--toolpolicy-max-turns", True, "turn budget per run, both arms (default 30)"),
    ("--toolpolicy-sandbox", True, "auto (default), require (refuse without bubblewrap), degraded"),
    (
        "--toolpolicy-limits",
        True,
        "host-side bounds NAME=VALUE,... (workspace_mb, snapshot_s, response_mb, search_s,"
        " read_mb), over TOOLPOLICY_LIMITS, which this sets for the session and its workers",
    ),
)
_OPTIONS += tuple((name, True, text) for name, text in (*ENDPOINT_OPTIONS, *GENERATION_OPTIONS))
_FLAGS: tuple[tuple[str, str], ...] = (
    ("--toolpolicy-gate", "exit non-zero unless the candidate wins (names failing criteria)"),
    ("--toolpolicy-resume", "keep finished items of the report directory; run the rest"),
    ("--toolpolicy-no-memo", "do not memoize test runs and grading by workspace tree hash"),
    ("--toolpolicy-hide-tests", "do not show the FAIL_TO_PASS tests to the agent"),
)
_INI_KEYS = frozenset(
    ["toolpolicy", *(name[2:].replace("-", "_") for name, ini, _ in _OPTIONS if ini)]
)
SESSION_KEY = pytest.StashKey[Any]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("toolpolicy", "tool-calling policy A/B (spec §9)")
    group.addoption(
        "--toolpolicy",
        dest="toolpolicy",
        nargs="?",
        const="",  # ab.settings.BARE (not imported here: loading the plugin stays cheap)
        default=None,
        metavar="MODE",
        help=_MODE_HELP,
    )
    parser.addini("toolpolicy", "default for --toolpolicy (current, policy or ab)", default="")
    for name, ini, text in _OPTIONS:
        dest = name[2:].replace("-", "_")
        group.addoption(
            name, dest=dest, default=None, metavar=dest.split("_")[-1].upper(), help=text
        )
        if ini:
            parser.addini(dest, f"default for {name}", default="")
    group.addoption(
        "--toolpolicy-ablate",
        dest="toolpolicy_ablate",
        nargs="?",
        const="all",
        default=None,
        metavar="GATE,...",
        help="also run the policy with each gate off in turn (all gates when bare)",
    )
    for name, text in _FLAGS:
        group.addoption(name, dest=name[2:].replace("-", "_"), action="store_true", help=text)


def pytest_configure(config: pytest.Config) -> None:
    def get(dest: str) -> Any:
        value = config.getoption(dest, None)
        if value in (None, False) and dest in _INI_KEYS:
            value = config.getini(dest) or None
        return value

    if get("toolpolicy") is None and get("toolpolicy_limits") is None:
        return  # an ordinary run: nothing of the A/B (pandas, the harness) is imported
    from .ab.hooks import ABHooks
    from .ab.session import ABSession
    from .ab.settings import SettingsError, limits_from, settings_from

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
    session.loaded()  # a dataset that cannot load is a usage error, before anything runs
    session.sandbox()  # so is a sandbox that is required and cannot run
    session.open()  # and a report directory that cannot be written, or is another session's
    config.add_cleanup(session.release)
    # Last: the checks above are cheap, and a server takes seconds to start.
    _serve_local_model(config, settings)
    config.stash[SESSION_KEY] = session
    config.pluginmanager.register(ABHooks(session), "toolpolicy-ab")


def _serve_local_model(config: pytest.Config, settings: Any) -> None:
    """A ``local:`` model's server, started once by the process that owns the session (not by
    each xdist worker: they inherit its address) and stopped at the session's end, Ctrl-C
    included. A replay needs no server: the recording answers."""
    if not settings.model.startswith("local:") or settings.cache == "replay":
        return
    if settings.endpoint.base_url:  # a server of the user's own
        return
    if hasattr(config, "workerinput"):
        return
    from .models.local.server import ServerError
    from .models.local.session import start_server, stop_server
    from .models.local.weights import WeightsError

    server_settings = settings.generation.local.server_settings()
    try:
        server = start_server(settings.model.partition(":")[2], server_settings)
    except (ServerError, WeightsError) as exc:
        raise pytest.UsageError(str(exc)) from None
    config.add_cleanup(lambda: stop_server(server))


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


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "toolpolicy_item" not in metafunc.fixturenames:
        return
    session = metafunc.config.stash.get(SESSION_KEY, None)
    if session is None:
        off = pytest.mark.skip(reason="the A/B is off: run with --toolpolicy=ab|policy|current")
        metafunc.parametrize("toolpolicy_item", [pytest.param(None, marks=off, id="off")])
        return
    specs = session.specs()
    metafunc.parametrize("toolpolicy_item", specs, ids=[s.id for s in specs], indirect=True)


@pytest.fixture
def toolpolicy_item(request: pytest.FixtureRequest) -> Any:
    """One A/B item (instance × arm × variant); ``toolpolicy_item.run()`` runs and records it."""
    from .ab.hooks import ItemHandle

    session = request.config.stash[SESSION_KEY]
    return ItemHandle(request.param, session, request.node)


@pytest.fixture
def toolpolicy_toolbox(tmp_path: Path) -> Callable[[dict[str, str]], Toolbox]:
    """A factory: ``toolpolicy_toolbox({"pkg/mod.py": source, ...})`` writes the files into a
    fresh git workspace (they become its base commit) and returns the six primitives over it;
    the workspace is ``toolbox.workspace``."""

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


@pytest.fixture
def toolpolicy_registry() -> dict[str, dict[str, Any]]:
    """The six-tool registry (spec §4.1), a copy a test may change freely."""
    from .policy.registry import REGISTRY

    return copy.deepcopy(REGISTRY)


@pytest.fixture
def trust_gate() -> Callable[..., Any]:
    """``trust_gate(call, envelope, config=None)`` → Verdict (spec §6.2), default gates on."""
    from .policy.config import PolicyConfig
    from .policy.trust import trust_gate as gate

    def check(call: Any, envelope: dict[str, Any], config: PolicyConfig | None = None) -> Any:
        return gate(call, envelope, config or PolicyConfig())

    return check


@pytest.fixture
def toolpolicy_loop(toolpolicy_toolbox: Callable[[dict[str, str]], Toolbox]) -> Callable[..., Any]:
    """A factory: ``toolpolicy_loop(files, model, config=None)`` → a PolicyLoop over a fresh
    workspace holding ``files``. ``model`` is any Model, or a list of reply strings for a
    ScriptedModel. Run it with ``loop.run(Task(instance_id, issue_text, test_target))``."""
    from .models.scripted import ScriptedModel
    from .policy.loop import PolicyLoop

    def make(files: dict[str, str], model: Any, config: Any = None) -> PolicyLoop:
        if isinstance(model, Sequence) and not isinstance(model, str):
            model = ScriptedModel(list(model))
        return PolicyLoop(toolpolicy_toolbox(files), model, config)

    return make
