"""The A/B session's settings: every ``--toolpolicy*`` option checked once, in one place.

``settings_from`` is a pure function of an option getter, so a bad value is refused with a
specific message (the plugin turns it into ``pytest.UsageError``) before anything runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..paths import safe_name
from ..policy.config import GATES
from .schema import FIRST_ABLATIONS

MODES = ("current", "policy", "ab")
CACHE_MODES = ("off", "record", "replay")
SANDBOX_MODES = ("auto", "require", "degraded")


class SettingsError(ValueError):
    pass


@dataclass(frozen=True)
class Settings:
    mode: str  # current | policy | ab
    model: str = "sim"
    dataset: str = "bundled"
    repos: Path | None = None
    sample: int | None = None
    seed: int = 0
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

    @property
    def arms(self) -> tuple[str, ...]:
        return ("current", "policy") if self.mode == "ab" else (self.mode,)


def ablation_order(gates: tuple[str, ...]) -> tuple[str, ...]:
    first = tuple(g for g in FIRST_ABLATIONS if g in gates)
    return first + tuple(g for g in GATES if g in gates and g not in first)


def settings_from(get: Callable[[str], Any], env: dict[str, str] | None = None) -> Settings | None:
    """``get(name)`` returns an option's value (None when not given). None: the A/B is off."""
    env = os.environ if env is None else env
    mode = get("toolpolicy") or env.get("TOOL_POLICY") or None
    if mode is None or mode == "off":
        return None
    if mode not in MODES:
        raise SettingsError(f"--toolpolicy must be one of {', '.join(MODES)}, got {mode!r}")
    sample = _positive(get("toolpolicy_sample"), "--toolpolicy-sample")
    max_turns = _positive(get("toolpolicy_max_turns"), "--toolpolicy-max-turns") or 30
    seed = _integer(get("toolpolicy_seed"), "--toolpolicy-seed") or 0
    cache = get("toolpolicy_cache") or "off"
    if cache not in CACHE_MODES:
        raise SettingsError(f"--toolpolicy-cache must be one of {', '.join(CACHE_MODES)}")
    sandbox = get("toolpolicy_sandbox") or env.get("TOOLPOLICY_SANDBOX") or "auto"
    if sandbox not in SANDBOX_MODES:
        raise SettingsError(
            f"--toolpolicy-sandbox must be one of {', '.join(SANDBOX_MODES)}, got {sandbox!r}"
        )
    ablate = _gates(get("toolpolicy_ablate"))
    if ablate and mode == "current":
        raise SettingsError(
            "--toolpolicy-ablate turns off policy gates: use --toolpolicy=policy|ab"
        )
    repos = get("toolpolicy_repos")
    if repos and not Path(repos).is_dir():
        raise SettingsError(f"--toolpolicy-repos: not a directory: {repos}")
    model = get("toolpolicy_model") or "sim"
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
        ablate=ablate,
        cache=cache,
        cache_file=Path(cache_file) if cache_file else None,
        report=Path(report) if report else Path("reports") / _slug(model, dataset, seed, sample),
        gate=bool(get("toolpolicy_gate")),
        max_turns=max_turns,
        resume=bool(get("toolpolicy_resume")),
        memo=not get("toolpolicy_no_memo"),
        tests_visible=not get("toolpolicy_hide_tests"),
        sandbox=sandbox,
    )


def _gates(value: Any) -> tuple[str, ...]:
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


def _integer(value: Any, name: str) -> int | None:
    if value is None or value == "":
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise SettingsError(f"{name} must be an integer, got {value!r}") from None


def _positive(value: Any, name: str) -> int | None:
    number = _integer(value, name)
    if number is not None and number <= 0:
        raise SettingsError(f"{name} must be a positive integer, got {value!r}")
    return number


def _slug(model: str, dataset: str, seed: int, sample: int | None) -> str:
    """A report directory named by what the run is, so a resumed run finds its own results."""
    parts = [model, Path(dataset).name or dataset, f"seed{seed}"]
    if sample:
        parts.append(f"n{sample}")
    return safe_name("-".join(parts))
