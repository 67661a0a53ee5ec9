"""Validation of a benchmark: each instance's gold patch must resolve it and an empty patch
must not; an under-specified instance is not graded for resolution, but its PASS_TO_PASS tests
must pass at the base commit.

Each row says which of three it is — validated, an infra_error (the instance cannot be judged
here: the environment, the network, the harness) or failed (it ran, and gold did not resolve
or the empty patch did) — with a short cause (``causes.py``), which ``coverage.py`` counts per
repository. Rows are appended to a JSON Lines file as each finishes, so an interrupted run
keeps what it had.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..envs.environment import Environment
from ..envs.stage import Resolved, Unavailable
from ..primitives.sandbox import Sandbox
from .causes import cause_of
from .grade import GradeResult, grade_patch

if TYPE_CHECKING:
    from ..bench.instance import Instance


Category = Literal["validated", "infra_error", "failed"]


@dataclass(frozen=True)
class ValidationRow:
    instance_id: str
    gold: str  # a grade status, or "-" when not graded
    empty: str
    ok: bool
    verdict: str
    seconds: float
    repo: str = ""
    category: Category = "failed"
    cause: str = ""  # "" when validated


def validate_instance(
    instance: Instance,
    *,
    sandbox: Sandbox,
    env: Environment | Unavailable | None = None,
    repos: Path | None = None,
    cache_dir: Path | None = None,
    timeout: float = 300.0,
) -> ValidationRow:
    """``env``: what the caller's environment stage resolved for ``instance`` (None for a
    bundled one)."""
    start = time.monotonic()
    kw = dict(sandbox=sandbox, env=env, repos=repos, cache_dir=cache_dir, timeout=timeout)
    empty = grade_patch(instance, "", **kw)  # type: ignore[arg-type]
    if instance.underspecified:
        ok, verdict = _passes_at_base(instance, empty)
        # No FAIL_TO_PASS to judge: the empty patch only shows PASS_TO_PASS holds at base.
        category: Category
        if ok:
            category, cause = "validated", ""
        elif empty.status == "infra_error":
            category, cause = "infra_error", cause_of(empty.status, empty.reason)
        else:
            category, cause = "failed", "PASS_TO_PASS failing at base"
        empty_shown = "p2p ok" if ok else "p2p failing"
        return _row(instance, "-", empty_shown, verdict, start, category, cause)
    gold = grade_patch(instance, instance.patch, **kw)  # type: ignore[arg-type]
    problems = []
    if gold.status != "resolved":
        problems.append(f"gold {gold.status}: {gold.reason}")
    if empty.status != "unresolved":
        problems.append(f"empty {empty.status}" + (f": {empty.reason}" if empty.reason else ""))
    verdict = "; ".join(problems) or "ok"
    infra = next((g for g in (gold, empty) if g.status == "infra_error"), None)
    if not problems:
        category, cause = "validated", ""
    elif infra is not None:
        category, cause = "infra_error", cause_of(infra.status, infra.reason)
    elif gold.status != "resolved":
        category, cause = "failed", "gold: " + cause_of(gold.status, gold.reason)
    else:
        category, cause = "failed", f"empty {empty.status}"
    return _row(instance, gold.status, empty.status, verdict, start, category, cause)


def _passes_at_base(instance: Instance, empty: GradeResult) -> tuple[bool, str]:
    if empty.status in ("infra_error", "patch_error"):
        return False, f"under-specified; base {empty.status}: {empty.reason}"
    failing = [t for t in instance.PASS_TO_PASS if empty.tests.get(t) != "passed"]
    failing = [t for t in failing if t not in empty.ignored]  # junk ids, network-bound tests
    if failing:
        return False, f"under-specified; PASS_TO_PASS not passing at base: {', '.join(failing)}"
    return True, "under-specified (not graded for resolution; PASS_TO_PASS pass at base)"


def _row(
    instance: Instance,
    gold: str,
    empty: str,
    verdict: str,
    start: float,
    category: Category,
    cause: str,
) -> ValidationRow:
    seconds = round(time.monotonic() - start, 2)
    ok = category == "validated"
    return ValidationRow(
        instance.instance_id, gold, empty, ok, verdict, seconds, instance.repo, category, cause
    )


def validate(
    instances: Sequence[Instance],
    *,
    sandbox: Sandbox,
    jobs: int = 2,
    repos: Path | None = None,
    cache_dir: Path | None = None,
    timeout: float = 300.0,
    on_row: Callable[[ValidationRow], object] | None = None,
    environments: Mapping[str, Resolved] | None = None,
) -> list[ValidationRow]:
    """Rows in the order of ``instances``; an unexpected exception in one becomes its row.
    ``on_row`` is called with each row as it finishes (from the worker's thread).
    ``environments``: the instances' own, resolved ahead (``envs/stage.py``)."""
    environments = environments or {}
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
    if not 0 < timeout < float("inf"):
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")

    def one(instance: Instance) -> ValidationRow:
        start = time.monotonic()
        try:
            row = validate_instance(
                instance,
                sandbox=sandbox,
                env=environments.get(instance.instance_id),
                repos=repos,
                cache_dir=cache_dir,
                timeout=timeout,
            )
        except Exception as exc:  # a harness fault in one instance must not sink the rest
            why = f"{type(exc).__name__}: {exc}"
            row = _row(instance, "?", "?", why, start, "infra_error", cause_of("?", why))
        if on_row is not None:
            on_row(row)
        return row

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(one, instances))


def format_table(rows: Iterable[ValidationRow], errors: Iterable[object] = ()) -> str:
    rows = list(rows)
    width = max([len("instance"), *(len(r.instance_id) for r in rows)])
    lines = [f"{'instance':<{width}}  {'gold':<11}  {'empty':<11}  {'seconds':>7}  verdict"]
    for r in rows:
        verdict = r.verdict if r.ok else f"FAIL: {r.verdict}"
        lines.append(
            f"{r.instance_id:<{width}}  {r.gold:<11}  {r.empty:<11}  {r.seconds:>7.2f}  {verdict}"
        )
    errors = list(errors)
    lines += [f"load error: {error}" for error in errors]
    failed = sum(not r.ok for r in rows)
    lines.append(f"{len(rows)} instances, {failed} failed, {len(errors)} failed to load")
    return "\n".join(lines)
