"""What ``toolpolicy envs resolve`` checks (``cli/envs_resolve.py``): whether what a spec
installs before the repository itself resolves here, for the spec's interpreter, without a
checkout.

A repository too big to mirror here (django, matplotlib, scikit-learn) cannot have its
environments built, but what its specs pin can still be checked: ``pip_first`` and
``pip_packages`` (pins and bare names) are resolved by ``uv pip compile`` as the build resolves
them (the exact pins as ``--override``, ``TOOL_BOUNDS``, the spec's cutoff per package, three
rounds at most, as ``Builder._resolve``), for the spec's interpreter as ``interpreters.py``
finds it (else ``--python-version X.Y``), with ``--only-binary :all:``. Requirement files (and
``fallback_packages``, which stand in for a missing one) are read from the checkout: not
checked, and said so.

A source build is allowed only where the spec says it chose one: a package the spec pins to
the release one of its ``substitutions`` names (``"maxminddb -> 1.5.1: ... the first that
builds"``: no maxminddb release has a cp36 wheel). Such a package, where uv says it has no
usable wheel, is resolved from its sdist (``--no-binary``) and then built for real
(``uv pip install --no-deps --target``): a source build that works, not one that only resolves.
A SWE-bench pin with no wheel for the interpreter (scikit-learn's numpy 1.19.2 on Python 3.9)
is a failure: the spec must substitute it.

The cutoff: a spec's own date is used; ``setup_commit`` (the default) needs the checkout's
commit date and ``created_at`` an instance, so neither has one here: no cutoff, and the line
says which. uv runs in the sandbox with the network, as the build's steps do: a source build
runs a third party's setup code.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .constraints import normal
from .spec import EnvironmentSetupError, EnvSpec, listed_versions, spec_for
from .venvs import TOOL_BOUNDS

Status = Literal["resolved", "failed"]
# A spec's exact pin: ``name==1.2.3`` (extras and a marker allowed), as ``builder._PIN``.
_EXACT = re.compile(
    r"^\s*([A-Za-z0-9][A-Za-z0-9._\-]*)(?:\[[^\]]*\])?\s*===?\s*([^\s;,*]+)\s*(?:;.*)?$"
)
# A substitution's head: ``name -> 1.5.1:`` or ``name==1.19.2 -> 1.19.3:``.
_SUBSTITUTED = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._\-]*)(?:==\S+)?\s*->\s*([^\s:]+):")
# What uv says of a package that has no wheel for the target (its error and its hint).
_NO_WHEELS = (
    re.compile(r"([A-Za-z0-9][A-Za-z0-9._\-]*)(?:[=<>!~]=?[^\s,]*)? has no usable wheels"),
    re.compile(r"Wheels are required for `([^`]+)`"),
)
_RESOLVED_LINE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._\-]*)(?:\[[^\]]*\])?==(\S+)")
_CUTOFF_ROUNDS = 3  # as Builder._resolve: new names a cut-off round brings, cut off on the next


@dataclass(frozen=True)
class Plan:
    """What is asked of uv for one spec, from the spec alone."""

    spec: EnvSpec
    pip_first: tuple[str, ...]
    packages: tuple[str, ...]
    exact: frozenset[str]  # names pinned exactly (normalized): overrides, never cut off
    source_ok: frozenset[str]  # names the spec chose a source build of (normalized)
    cutoff: str | None
    cutoff_note: str  # where the cutoff (or its absence) comes from
    unchecked: tuple[str, ...]  # what needs the checkout


@dataclass(frozen=True)
class Completed:
    code: int
    stdout: str
    stderr: str


# (argv, the directory it may write, the interpreter it runs for) -> how it ended.
Runner = Callable[[Sequence[str], Path, str], Completed]


@dataclass(frozen=True)
class Outcome:
    repo: str
    version: str
    python: str  # "X.Y" resolved for
    interpreter: str  # the interpreter found, "" where uv was given --python-version only
    status: Status
    seconds: float
    reason: str = ""  # uv's, first line, when it failed
    packages: int = 0  # how many the resolution holds (pip_first apart)
    from_source: tuple[str, ...] = ()  # name==version built from its sdist
    cutoff: str | None = None
    cutoff_note: str = ""
    unchecked: tuple[str, ...] = ()


def plan_for(spec: EnvSpec) -> Plan:
    """What resolving ``spec`` asks of uv (pure)."""
    exact = {normal(m[1]): m[2] for p in spec.pip_packages if (m := _EXACT.match(p))}
    chosen = {normal(m[1]): m[2] for s in spec.substitutions if (m := _SUBSTITUTED.match(s))}
    source_ok = frozenset(n for n, v in chosen.items() if exact.get(n) == v)
    rule = spec.exclude_newer
    if rule in ("setup_commit", "created_at", "none"):
        cutoff = None
        note = {
            "setup_commit": "none: setup_commit, the commit's date needs the checkout",
            "created_at": "none: created_at, a date per instance",
            "none": "none: the spec has none",
        }[rule]
    else:
        cutoff, note = rule, f"{rule}: the spec's"
    unchecked = tuple(f"{r} (needs the checkout)" for r in spec.requirements)
    if spec.requirements and spec.fallback_packages:
        unchecked += ("fallback_packages (used only where the checkout lacks those files)",)
    return Plan(
        spec=spec,
        pip_first=spec.pip_first,
        packages=spec.pip_packages,
        exact=frozenset(exact),
        source_ok=source_ok,
        cutoff=cutoff,
        cutoff_note=note,
        unchecked=unchecked,
    )


def compile_argv(
    uv: str,
    target: Sequence[str],
    inputs: Sequence[str],
    *,
    overrides: str | None = None,
    constraints: str | None = None,
    build_constraints: str | None = None,
    no_binary: Iterable[str] = (),
    cut_off: Iterable[str] = (),
    cutoff: str | None = None,
    extra: Sequence[str] = (),
) -> list[str]:
    """``uv pip compile`` of ``inputs`` for ``target`` (``--python PATH`` or
    ``--python-version X.Y``): wheels only but for ``no_binary``, the names ``cut_off`` held
    to ``cutoff`` (each alone: the build cuts off per package), ``extra`` (index options)."""
    argv = [uv, "pip", "compile", "--quiet", "--no-header", *target, *extra]
    argv += ["--only-binary", ":all:", *(f"--no-binary={n}" for n in sorted(no_binary))]
    for flag, path in (
        ("--override", overrides),
        ("--constraint", constraints),
        ("--build-constraint", build_constraints),
    ):
        argv += [flag, path] if path else []
    if cutoff:
        argv += [f"--exclude-newer-package={n}={cutoff}" for n in sorted(cut_off)]
    return [*argv, *inputs]


def build_argv(
    uv: str,
    target: Sequence[str],
    pins: Sequence[str],
    into: Path,
    *,
    build_constraints: str | None = None,
    extra: Sequence[str] = (),
) -> list[str]:
    """Build ``pins`` (name==version) from their sdists for real, alone, into ``into``."""
    names = [f"--no-binary={p.split('==')[0]}" for p in pins]
    argv = [uv, "pip", "install", "--quiet", "--no-deps", *target, *extra, *names]
    argv += ["--build-constraint", build_constraints] if build_constraints else []
    return [*argv, "--target", str(into), *pins]


def uv_reason(output: str) -> str:
    """The first line of uv's reason: its ``error:`` line with the first ``cause:`` after it
    (``No solution found when resolving dependencies: Because numpy==1.19.2 has no usable
    wheels ...``); else the last line printed."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    for n, line in enumerate(lines):
        if line.startswith(("error:", "×")):
            head = line.removeprefix("error:").removeprefix("×").strip().rstrip(":")
            causes = (c for c in lines[n + 1 :] if c.startswith(("cause:", "╰─▶")))
            cause = next(causes, "").removeprefix("cause:").removeprefix("╰─▶").strip()
            return f"{head}: {cause}" if cause else head
    return lines[-1] if lines else "(no output)"


def wheels_missing(output: str) -> set[str]:
    """The names uv says have no usable wheel (normalized)."""
    return {normal(m[1]) for pattern in _NO_WHEELS for m in pattern.finditer(output)}


def resolved_pins(compiled: str) -> dict[str, str]:
    """``uv pip compile``'s output as normalized name -> version."""
    return {
        normal(m[1]): m[2] for line in compiled.splitlines() if (m := _RESOLVED_LINE.match(line))
    }


def resolve_spec(
    plan: Plan,
    run: Runner,
    workdir: Path,
    *,
    interpreter: str,
    python: str,
    uv: str,
    extra: Sequence[str] = (),
) -> Outcome:
    """Resolve what ``plan`` installs before the repository, ``run`` running uv in
    ``workdir``. ``interpreter``: the one found for ``python`` ("X.Y"), "" for none
    (``--python-version``: resolved, not built)."""
    from .builder import cut_off_names, runner_names  # the build's own rules of the cutoff

    start = time.monotonic()
    spec = plan.spec
    target = ["--python", interpreter] if interpreter else ["--python-version", python]

    def done(status: Status, reason: str = "", **more: Any) -> Outcome:
        return Outcome(
            repo=spec.repo, version=spec.version, python=python, interpreter=interpreter,
            status=status, seconds=round(time.monotonic() - start, 1), reason=reason,
            cutoff=plan.cutoff, cutoff_note=plan.cutoff_note, unchecked=plan.unchecked, **more,
        )  # fmt: skip

    def write(name: str, lines: Iterable[str]) -> str:
        path = workdir / name
        path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
        return str(path)

    bounds = write("build-constraints.txt", spec.build_constraints)
    bounds_arg = bounds if spec.build_constraints else None
    if plan.pip_first:  # installed first and alone, as the build does: no cutoff, no TOOL_BOUNDS
        argv = compile_argv(uv, target, [write("pip-first.txt", plan.pip_first)], extra=extra)
        argv += ["--build-constraint", bounds] if bounds_arg else []
        result = run(argv, workdir, interpreter)
        if result.code:
            return done("failed", f"pip_first: {uv_reason(result.stderr)}")
    if not plan.packages:
        return done("resolved")
    pins = write("pins.txt", plan.packages)
    overrides = write("overrides.txt", (p for p in plan.packages if _EXACT.match(p)))
    tools = write("tool-bounds.txt", TOOL_BOUNDS)
    runners = runner_names(spec.test_cmd)
    no_binary: set[str] = set()
    names: set[str] = set()
    rounds = 0
    while True:  # ends: each retry adds a name of a finite set, each round is counted
        argv = compile_argv(
            uv, target, [pins], overrides=overrides if plan.exact else None,
            constraints=tools, build_constraints=bounds_arg, no_binary=no_binary,
            cut_off=names - plan.exact, cutoff=plan.cutoff, extra=extra,
        )  # fmt: skip
        result = run(argv, workdir, interpreter)
        if result.code:
            # A package the spec chose to build from source, with no wheel: from its sdist.
            allowed = (wheels_missing(result.stderr) & plan.source_ok) - no_binary
            if allowed:
                no_binary |= allowed
                continue
            return done("failed", uv_reason(result.stderr))
        rounds += 1
        found = cut_off_names(result.stdout, runners, plan.exact)
        if not plan.cutoff or found <= names or rounds == _CUTOFF_ROUNDS:
            break
        names |= found
    pinned = resolved_pins(result.stdout)
    built = tuple(sorted(f"{n}=={pinned[n]}" for n in no_binary if n in pinned))
    more: dict[str, Any] = {"packages": len(pinned), "from_source": built}
    if built and not interpreter:
        return done("failed", f"no Python {python} here to build {', '.join(built)} with", **more)
    if built:
        into = workdir / "built"
        argv = build_argv(uv, target, built, into, build_constraints=bounds_arg, extra=extra)
        result = run(argv, workdir, interpreter)
        if result.code:
            return done("failed", f"source build: {uv_reason(result.stderr)}", **more)
    return done("resolved", **more)


def sandboxed(
    cache: Path, read: Sequence[str] = (), network: bool = True, timeout: float = 600.0
) -> Runner:
    """A ``Runner`` that runs uv in the sandbox, as the build's steps do (``builder.py``): a
    source build runs a third party's setup code. ``cache``: uv's cache (shared with the
    builds: ``cache_dir()/uv``); ``read``: more host paths it may read (a find-links
    directory)."""
    from ..primitives.sandbox import Sandbox
    from .builder import build_sandbox
    from .pipsettings import build_environ, pip_paths
    from .venvs import uv_binary

    sandbox = build_sandbox(Sandbox.from_env())

    def run(argv: Sequence[str], workdir: Path, interpreter: str) -> Completed:
        cache.mkdir(parents=True, exist_ok=True)
        env = {**build_environ(), "UV_NO_PROGRESS": "1", "UV_PYTHON_DOWNLOADS": "never"}
        env["UV_CACHE_DIR"] = str(cache)
        result = sandbox.run(
            list(argv), cwd=workdir, writable=workdir, stdin=None, timeout=timeout,
            merge_stderr=False, python=interpreter or sys.executable, env=env,
            network=network, ro_binds=[*pip_paths(), uv_binary(), *read],
            rw_mounts=[(str(cache), str(cache))],
        )  # fmt: skip
        stdout = result.stdout.decode("utf-8", errors="replace")
        stderr = result.stderr.decode("utf-8", errors="replace")
        if result.timed_out:
            return Completed(124, stdout, f"error: timed out after {timeout:g}s\n{stderr}")
        return Completed(result.exit_code, stdout, stderr)

    return run


def spec_versions(repo: str) -> list[str]:
    """The versions the specs (shipped and the user's) list for ``repo``, oldest first."""
    return sorted(listed_versions(repo), key=_version_key)


def format_line(o: Outcome) -> str:
    """One (repo, version)'s line: resolved / failed, seconds, and why."""
    head = f"{o.status:8} {o.repo} {o.version}  python {o.python}  {o.seconds:.1f}s"
    if o.status == "failed":
        return f"{head}  {o.reason}"
    parts = [f"{o.packages} package(s)" if o.packages else "nothing pinned"]
    parts += [f"from source: {', '.join(o.from_source)}"] if o.from_source else []
    parts += [f"cutoff {o.cutoff_note}"]
    parts += [f"not checked: {'; '.join(o.unchecked)}"] if o.unchecked else []
    return f"{head}  {'; '.join(parts)}"


def format_table(outcomes: Sequence[Outcome]) -> str:
    """Per repository: versions, resolved, failed (which), seconds; then a summary line."""
    repos: dict[str, list[Outcome]] = {}
    for o in outcomes:
        repos.setdefault(o.repo, []).append(o)
    header = ("repo", "versions", "resolved", "failed", "seconds", "reqs not checked", "failing")
    body = [
        (
            repo,
            str(len(rows)),
            str(sum(r.status == "resolved" for r in rows)),
            str(sum(r.status == "failed" for r in rows)),
            f"{sum(r.seconds for r in rows):.1f}",
            str(sum(bool(r.unchecked) for r in rows)),
            ", ".join(r.version for r in rows if r.status == "failed") or "-",
        )
        for repo, rows in repos.items()
    ]
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(header)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
             for row in [header, *body]]  # fmt: skip
    failed = sum(o.status == "failed" for o in outcomes)
    lines.append(f"{len(outcomes)} spec(s): {len(outcomes) - failed} resolved, {failed} failed")
    return "\n".join(lines)


def spec_pairs(repos: Sequence[str], versions: Sequence[str] | None) -> list[tuple[str, str]]:
    """(repo, version) of each spec listed for ``repos``, only ``versions`` where given."""
    return [(r, v) for r in repos for v in spec_versions(r) if not versions or v in versions]


def resolve_version(repo: str, version: str, run: Runner) -> Outcome:
    """Resolve the spec of ``repo`` at ``version`` for its interpreter as found here, else for
    its Python version alone. ``EnvironmentSetupError`` where no spec can be had."""
    from .interpreters import find_python, interpreter_version
    from .venvs import uv_binary

    spec = spec_for(repo, version)
    try:
        interpreter = find_python(spec.python, repo=repo, repo_version=version)
        python = interpreter_version(os.path.realpath(interpreter)) or spec.python
    except EnvironmentSetupError:
        # No interpreter of that version here: resolved for it all the same.
        interpreter, python = "", spec.python
    with tempfile.TemporaryDirectory(prefix="toolpolicy-resolve-") as tmp:
        return resolve_spec(
            plan_for(spec), run, Path(tmp), interpreter=interpreter, python=python,
            uv=uv_binary(),
        )  # fmt: skip


def record_outcome(path: Path, outcome: Outcome) -> None:
    """``outcome`` appended to the JSON Lines file ``path``."""
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(dataclasses.asdict(outcome)) + "\n")


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else -1 for p in version.split("."))
