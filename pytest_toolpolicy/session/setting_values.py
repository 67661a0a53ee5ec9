"""Each ``--toolpolicy*`` option's value checked on its own, for ``settings.py``: a bad value is a
``SettingsError`` whose message names the option and what it takes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..agents.spec import AgentSpec, AgentSpecError, parse_agent
from ..bench.since import Since
from ..decide.variants import FIRST_ABLATIONS
from ..paths import safe_name
from ..policy.config import GATES
from ..run.candidates import Candidate
from ..run.candidates_file import CandidateError, read_candidates
from ..run.itemdir import LOCK_WAIT_ENV, LOCK_WAIT_S, WORKDIR_ENV, default_workdir
from .confinement import home_problem


class SettingsError(ValueError):
    pass


def ablation_order(gates: tuple[str, ...]) -> tuple[str, ...]:
    first = tuple(g for g in FIRST_ABLATIONS if g in gates)
    return first + tuple(g for g in GATES if g in gates and g not in first)


def sandbox_policy(get: Callable[[str], Any], env: Mapping[str, str]) -> tuple[str, str]:
    """The sandbox policy and who chose it (named in the header when it is ``degraded``)."""
    if get("toolpolicy_sandbox"):
        return str(get("toolpolicy_sandbox")), "--toolpolicy-sandbox"
    if env.get("TOOLPOLICY_SANDBOX"):
        return env["TOOLPOLICY_SANDBOX"], "TOOLPOLICY_SANDBOX"
    return "auto", ""


def workdir_from(env: Mapping[str, str]) -> Path:
    text = env.get(WORKDIR_ENV, "").strip()
    return Path(os.path.abspath(text)) if text else default_workdir()


def lock_wait_from(env: Mapping[str, str]) -> float:
    text = env.get(LOCK_WAIT_ENV, "").strip()
    if not text:
        return LOCK_WAIT_S
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value >= 0 or value == float("inf"):
        raise SettingsError(f"{LOCK_WAIT_ENV} must be a number of seconds, not {text!r}")
    return value


def candidates_from(path: Any, mode: str) -> tuple[tuple[Candidate, ...], str | None]:
    if not path:
        return (), None
    if mode == "current":
        raise SettingsError(
            "--toolpolicy-candidates runs candidate policies: use --toolpolicy=ab (they are"
            " judged against current) or --toolpolicy=policy"
        )
    try:
        return read_candidates(path)
    except CandidateError as exc:
        raise SettingsError(f"--toolpolicy-candidates {exc}") from None


def current_agent(option: Any, named: str | None, path: Any, env: Mapping[str, str]) -> AgentSpec:
    """The current arm's agent: the option's, else the candidates file's; both: they agree.
    An external one is refused where the directory it would be shown is a home or ``/``."""
    if option and named and str(option).strip() != named.strip():
        raise SettingsError(
            f"--toolpolicy-current {option} and {path}'s current = {named!r} name different"
            " agents: give one"
        )
    given = option or named
    where = "--toolpolicy-current" if option else f"{path}: current"
    project = os.getcwd()
    try:
        agent = parse_agent(given, project=project)
    except AgentSpecError as exc:
        raise SettingsError(f"{where}: {exc}") from None
    if agent.external and (why := home_problem(project, env)):
        raise SettingsError(
            f"{where} {agent.label}: this session started in {project}, {why}; an external"
            " agent is shown the directory the session starts in (read-only, as"
            " $TOOLPOLICY_PROJECT): start the session in your project's directory"
        )
    return agent


def flag_arm(env: Mapping[str, str]) -> str:
    """A bare ``--toolpolicy``: the arm the spec's flag ``TOOL_POLICY`` names, else both."""
    arm = env.get("TOOL_POLICY", "").strip()
    if not arm:
        return "ab"
    if arm not in ("policy", "current"):
        raise SettingsError(
            f"TOOL_POLICY must be policy or current (a bare --toolpolicy runs the arm it"
            f" names), got {arm!r}; or give --toolpolicy=current|policy|ab"
        )
    return arm


def gates_from(value: Any) -> tuple[str, ...]:
    if not value:
        return ()
    if value == "all":
        return ablation_order(GATES)
    names = tuple(n.strip() for n in str(value).split(",") if n.strip())
    unknown = [n for n in names if n not in GATES]
    if unknown:
        raise SettingsError(
            f"--toolpolicy-ablate: unknown gate {', '.join(unknown)}; gates: {', '.join(GATES)}"
        )
    return ablation_order(names)


def integer(value: Any, name: str) -> int | None:
    if value is None or value == "":
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise SettingsError(f"{name} must be an integer, got {value!r}") from None


def positive(value: Any, name: str) -> int | None:
    number = integer(value, name)
    if number is not None and number <= 0:
        raise SettingsError(f"{name} must be a positive integer, got {value!r}")
    return number


def report_slug(
    model: str, dataset: str, seed: int, sample: int | None, trials: int = 1,
    since: Since | None = None,
) -> str:  # fmt: skip
    """A report directory named by what the run is, so a resumed run finds its own results."""
    parts = [model, Path(dataset).name or dataset, f"seed{seed}"]
    if sample:
        parts.append(f"n{sample}")
    if since is not None:
        parts.append(f"since{since.when.date().isoformat()}")
    if trials > 1:
        parts.append(f"k{trials}")
    return safe_name("-".join(parts))
