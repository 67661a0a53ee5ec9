"""The pytest plugin (entry point ``toolpolicy``).

Loading it changes nothing about an ordinary pytest run: it registers no autouse fixture and no
hook that alters collection or reporting until ``--toolpolicy`` (or the ``toolpolicy`` ini key)
turns the A/B on; ``TOOL_POLICY`` in the environment alone never does, since it is the spec's
arm flag and may be set for reasons that have nothing to do with this pytest run. The fixtures
below are inert until a test asks for them by name. The A/B session itself lives in
``session/session.py``.

This module is the ``pytest11`` entry point and holds only what loading the plugin must do:
register the options, and declare the hooks and fixtures. Their bodies are in ``plugin_impl``,
imported when a hook or fixture first needs it, so that an ordinary run imports (and, when pytest
rewrites the asserts of a plugin's package, parses and compiles) as little as possible:
``benchmarks/bench_plugin_load.py`` measures what is left.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .run.generation import OPTIONS as GENERATION_OPTIONS
from .session.endpoint import OPTIONS as ENDPOINT_OPTIONS

if TYPE_CHECKING:  # imported by the fixtures that use them: loading the plugin stays cheap
    from .policy.loop import PolicyLoop
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
    (
        "--toolpolicy-strata",
        True,
        "how the sample is drawn: repo (default; an equal share per repository) or none",
    ),
    ("--toolpolicy-seed", True, "seed of the sample and of sim (default 0)"),
    (
        "--toolpolicy-since",
        True,
        "only instances created on or after DATE (YYYY-MM-DD), e.g. a model's training cutoff",
    ),
    ("--toolpolicy-cache", True, "model record/replay cache: off, record, replay"),
    ("--toolpolicy-cache-file", True, "the cache's SQLite file"),
    ("--toolpolicy-report", True, "report directory (default reports/<model>-<dataset>-seed<N>)"),
    ("--toolpolicy-max-turns", True, "turn budget per run, both arms (default 30)"),
    (
        "--toolpolicy-trials",
        True,
        "run every item K times (sim: a seed a trial); report pass^k and each measure's spread",
    ),
    (
        "--toolpolicy-candidates",
        True,
        "a TOML file of candidate policies, each run as its own variant cand:<name> and judged"
        " against current",
    ),
    (
        "--toolpolicy-current",
        True,
        "who plays the current arm: builtin (the stock loop, default) or cmd:COMMAND (your own"
        " agent, run in the sandbox, its model calls through the harness's bridge)",
    ),
    (
        "--toolpolicy-agent-timeout",
        True,
        "wall seconds an external current agent may run on one item (default 1800); then it is"
        " stopped, and its item ends budget_exhausted",
    ),
    (
        "--toolpolicy-sandbox",
        True,
        "auto (default: bubblewrap; without it a real model or an external agent is refused, sim"
        " and scripted: run degraded), require (refuse without bubblewrap), degraded (opt in to"
        " runs that see the host's files and network; the table's header says so)",
    ),
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
    ("--toolpolicy-no-view", "do not build the viewer's site (REPORT/view) at the end"),
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
        const="",  # session.settings.BARE (not imported here: loading the plugin stays cheap)
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
    from .plugin_impl import configure

    configure(config, get, SESSION_KEY)


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
    from .plugin_impl import item

    return item(request, request.config.stash[SESSION_KEY])


@pytest.fixture
def toolpolicy_toolbox(tmp_path: Path) -> Callable[[dict[str, str]], Toolbox]:
    """A factory: ``toolpolicy_toolbox({"pkg/mod.py": source, ...})`` writes the files into a
    fresh git workspace (they become its base commit) and returns the six primitives over it;
    the workspace is ``toolbox.workspace``."""
    from .plugin_impl import toolbox_factory

    return toolbox_factory(tmp_path)


@pytest.fixture
def toolpolicy_registry() -> dict[str, dict[str, Any]]:
    """The six-tool registry (spec §4.1), a copy a test may change freely."""
    from .plugin_impl import registry

    return registry()


@pytest.fixture
def trust_gate() -> Callable[..., Any]:
    """``trust_gate(call, envelope, config=None)`` → Verdict (spec §6.2), default gates on."""
    from .plugin_impl import trust_gate as checker

    return checker()


@pytest.fixture
def toolpolicy_loop(
    toolpolicy_toolbox: Callable[[dict[str, str]], Toolbox],
) -> Callable[..., PolicyLoop]:
    """A factory: ``toolpolicy_loop(files, model, config=None)`` → a PolicyLoop over a fresh
    workspace holding ``files``. ``model`` is any Model, or a list of reply strings for a
    ScriptedModel. Run it with ``loop.run(Task(instance_id, issue_text, test_target))``."""
    from .plugin_impl import loop_factory

    return loop_factory(toolpolicy_toolbox)
