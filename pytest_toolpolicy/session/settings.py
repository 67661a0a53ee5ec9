"""The A/B session's settings: every ``--toolpolicy*`` option checked once, in one place.

``settings_from`` is a pure function of an option getter, so a bad value is refused with a
specific message (the plugin turns it into ``pytest.UsageError``) before anything runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import limits
from ..agents.spec import AgentSpec
from ..bench.sampling import STRATA, Strata
from ..bench.since import Since, parse_since
from ..models.spec import validate_model_spec
from ..run.candidates import Candidate
from ..run.generation import Generation, GenerationError, generation_from
from ..run.itemdir import LOCK_WAIT_S, default_workdir
from .endpoint import Endpoint, EndpointError, endpoint_from
from .setting_values import (
    SettingsError,
    candidates_from,
    current_agent,
    flag_arm,
    gates_from,
    integer,
    lock_wait_from,
    positive,
    report_slug,
    sandbox_policy,
    workdir_from,
)

MODES = ("current", "policy", "ab")
MAX_TRIALS = 100
CACHE_MODES = ("off", "record", "replay")
SANDBOX_MODES = ("auto", "require", "degraded")
BARE = ""  # the value of a bare --toolpolicy (argparse's const)


@dataclass(frozen=True)
class Settings:
    mode: str  # current | policy | ab
    model: str = "sim"
    dataset: str = "bundled"
    repos: Path | None = None
    sample: int | None = None
    seed: int = 0
    strata: Strata = "repo"  # how the sample is drawn (--toolpolicy-strata)
    since: Since | None = None  # only instances created on or after it (--toolpolicy-since)
    ablate: tuple[str, ...] = ()
    cache: str = "off"
    cache_file: Path | None = None
    report: Path = Path("reports")
    gate: bool = False
    max_turns: int = 30
    resume: bool = False
    memo: bool = True
    tests_visible: bool = True
    sandbox: str = "auto"  # auto | require | degraded (TOOLPOLICY_SANDBOX otherwise)
    sandbox_source: str = ""  # who chose it: --toolpolicy-sandbox, TOOLPOLICY_SANDBOX ("" default)
    bwrap: str | None = None  # the bwrap binary (TOOLPOLICY_BWRAP; else found on PATH)
    endpoint: Endpoint = field(default_factory=Endpoint)
    generation: Generation = field(default_factory=Generation)
    trials: int = 1  # runs of each item (--toolpolicy-trials)
    candidates: tuple[Candidate, ...] = ()  # candidate policies (--toolpolicy-candidates)
    view: bool = True  # build the viewer's site at the end (--toolpolicy-no-view: not)
    current: AgentSpec = field(default_factory=lambda: AgentSpec("builtin"))  # who plays current
    agent_timeout: float = 1800.0  # wall seconds of an external agent's run on one item
    # Where items run (TOOLPOLICY_WORKDIR), one directory per report below it (run/itemdir.py),
    # and how long an item waits for its directory's lock (TOOLPOLICY_LOCK_WAIT) before failing.
    workdir: Path = field(default_factory=default_workdir)
    lock_wait: float = LOCK_WAIT_S

    @property
    def arms(self) -> tuple[str, ...]:
        return ("current", "policy") if self.mode == "ab" else (self.mode,)


def settings_from(
    get: Callable[[str], Any], env: Mapping[str, str] | None = None
) -> Settings | None:
    """``get(name)`` returns an option's value (None when not given; ``BARE`` for a bare
    ``--toolpolicy``). None: the A/B is off. Only the option (or its ini key) turns it on:
    ``TOOL_POLICY`` in the environment alone never does, so an unrelated project's pytest run
    stays an ordinary one."""
    env = os.environ if env is None else env
    mode = get("toolpolicy")
    if mode == BARE:
        mode = flag_arm(env)
    elif not mode or mode == "off":
        return None
    if mode not in MODES:
        hint = (
            " (a bare --toolpolicy takes the next argument as its value: write"
            " --toolpolicy=ab, or put the paths first)"
            if os.path.exists(str(mode))
            else ""
        )
        raise SettingsError(f"--toolpolicy must be one of {', '.join(MODES)}, got {mode!r}{hint}")
    sample = positive(get("toolpolicy_sample"), "--toolpolicy-sample")
    max_turns = positive(get("toolpolicy_max_turns"), "--toolpolicy-max-turns") or 30
    seed = integer(get("toolpolicy_seed"), "--toolpolicy-seed") or 0
    strata = get("toolpolicy_strata") or "repo"
    if strata not in STRATA:
        raise SettingsError(
            f"--toolpolicy-strata must be one of {', '.join(STRATA)}, got {strata!r}"
        )
    since = None
    if get("toolpolicy_since"):
        try:
            since = parse_since(str(get("toolpolicy_since")))
        except ValueError as exc:
            raise SettingsError(f"--toolpolicy-since: {exc}") from None
    cache = get("toolpolicy_cache") or "off"
    if cache not in CACHE_MODES:
        raise SettingsError(f"--toolpolicy-cache must be one of {', '.join(CACHE_MODES)}")
    sandbox, sandbox_source = sandbox_policy(get, env)
    if sandbox not in SANDBOX_MODES:
        raise SettingsError(
            f"--toolpolicy-sandbox must be one of {', '.join(SANDBOX_MODES)}, got {sandbox!r}"
        )
    ablate = gates_from(get("toolpolicy_ablate"))
    if ablate and mode == "current":
        raise SettingsError(
            "--toolpolicy-ablate turns off policy gates: use --toolpolicy=policy|ab"
        )
    repos = get("toolpolicy_repos")
    if repos and not Path(repos).is_dir():
        raise SettingsError(f"--toolpolicy-repos: not a directory: {repos}")
    model = get("toolpolicy_model") or "sim"
    try:  # a missing scripted:/sim: file is one usage error, not a failure on every item
        validate_model_spec(model, replay=cache == "replay")
    except ValueError as exc:
        raise SettingsError(f"--toolpolicy-model {model}: {exc}") from None
    try:
        endpoint = endpoint_from(get)
        generation = generation_from(get, model)
    except (EndpointError, GenerationError) as exc:
        raise SettingsError(str(exc)) from None
    candidates, competitor = candidates_from(get("toolpolicy_candidates"), mode)
    current = current_agent(
        get("toolpolicy_current"), competitor, get("toolpolicy_candidates"), env
    )
    agent_timeout = positive(get("toolpolicy_agent_timeout"), "--toolpolicy-agent-timeout")
    trials = positive(get("toolpolicy_trials"), "--toolpolicy-trials") or 1
    if trials > MAX_TRIALS:
        raise SettingsError(f"--toolpolicy-trials must be at most {MAX_TRIALS}, got {trials}")
    dataset = get("toolpolicy_dataset") or "bundled"
    report = get("toolpolicy_report")
    cache_file = get("toolpolicy_cache_file")
    return Settings(
        mode=mode,
        model=model,
        dataset=dataset,
        repos=Path(repos) if repos else None,
        sample=sample,
        seed=seed,
        strata=strata,
        since=since,
        ablate=ablate,
        cache=cache,
        cache_file=Path(cache_file) if cache_file else None,
        report=Path(report)
        if report
        else Path("reports") / report_slug(model, dataset, seed, sample, trials, since),
        gate=bool(get("toolpolicy_gate")),
        max_turns=max_turns,
        resume=bool(get("toolpolicy_resume")),
        memo=not get("toolpolicy_no_memo"),
        tests_visible=not get("toolpolicy_hide_tests"),
        view=not get("toolpolicy_no_view"),
        sandbox=sandbox,
        sandbox_source=sandbox_source,
        bwrap=env.get("TOOLPOLICY_BWRAP") or None,
        endpoint=endpoint,
        generation=generation,
        trials=trials,
        candidates=candidates,
        current=current,
        agent_timeout=float(agent_timeout or 1800),
        workdir=workdir_from(env),
        lock_wait=lock_wait_from(env),
    )


def limits_from(get: Callable[[str], Any], env: Mapping[str, str] | None = None) -> str | None:
    """``--toolpolicy-limits NAME=VALUE,...`` over ``TOOLPOLICY_LIMITS``, as the full text to
    export (None when not given): the sandbox, the models and every worker read the variable."""
    text = get("toolpolicy_limits")
    if not text:
        return None
    env = os.environ if env is None else env
    try:
        base = limits.parse_limits(env.get(limits.ENV))
    except limits.LimitsError as exc:
        raise SettingsError(f"{limits.ENV}: {exc}") from None
    try:
        return limits.parse_limits(str(text), base).text()
    except limits.LimitsError as exc:
        raise SettingsError(f"--toolpolicy-limits: {exc}") from None
