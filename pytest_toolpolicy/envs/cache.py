"""The Python environment an instance's tests run in.

Bundled instances need only the standard library and pytest: the current interpreter, with
pytest's plugin autoloading off, so that whatever else the harness's environment holds (and
pays to import) cannot change their outcome.

A real repository gets the environment its ``EnvSpec`` (``spec.py``) describes, built at
the instance's ``environment_setup_commit`` (else its base commit), one per (spec key, commit,
interpreter), under ``$TOOLPOLICY_CACHE_DIR/envs/<name>/``: that directory is the env's own
checkout with the venv inside it (``layout.py``). ``builder.py`` builds it: the checkout,
the venv (``venvs.py``: from a per-interpreter template, its start-up files put back after the
build so the host never runs code the build planted), the pip installs, ``pre_install`` and
``install`` (whatever runs the repository's code runs in the Sandbox, with pip's settings:
``pipsettings.py``); the venv's import paths and generated files are what an ``Environment``
(``environment.py``) carries into each item's workspace.

A venv's scripts hold absolute paths, so an environment is built in place under a lock and
published by writing ``<name>.json`` beside it last; a directory without one is a half-built
leftover, removed and rebuilt. A failed build writes ``<name>.failed.json`` (the error, the
spec key, the time) and later calls fail at once with that reason, until ``rebuild=True``
(``records.py``).

SWE-bench installs the repository at each instance's base commit into the setup commit's
environment. Where the two commits differ, what the base commit's install requires and the
environment lacks is found and installed (``Builder.top_up``) into a layer of the venv, which
goes on that instance's ``PYTHONPATH`` after the repo's paths (``Environment.extra_paths``);
recorded, and remembered when it fails, in ``<name>/.toolpolicy-base-<commit>.json``
(``.failed.json``).

Environments are a stage of their own: a run resolves those of its instances once, ahead of
them (``stage.py``: the A/B session, ``toolpolicy run``, ``validate`` and ``envs build``; mining,
one change at a time, in a step of its own), and hands each its ``Environment``. Preparing,
running or grading an item never comes here.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import hashlib
import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..bench.workspaces import cached_checkout, mirror_name
from ..paths import cache_dir as default_cache_dir
from ..paths import safe_name
from ..primitives import hostgit, safefs
from ..primitives.safefs import remove_tree
from ..primitives.sandbox import Sandbox
from .builder import Builder, build_sandbox
from .clock import ClockUnavailable, clock_env
from .environment import Environment
from .interpreters import find_python
from .layout import LAYERS, VENV, layer_ext, layer_site
from .pipsettings import pip_paths, scrubbed_environ
from .records import failure_record, lock, read_json, remembered, still_failing, write_json
from .spec import EnvironmentSetupError, EnvSpec, has_spec, spec_for
from .unlisted import fit_to_checkout

if TYPE_CHECKING:
    from ..bench.instance import Instance

__all__ = [
    "VENV", "Build", "Environment", "EnvironmentSetupError", "build_environment",
    "environment_for", "envs_root", "harness_environment", "list_environments", "pip_paths",
    "ready", "scrubbed_environ",
]  # fmt: skip

Status = Literal["built", "cached", "failed"]


@dataclass(frozen=True)
class Build:
    """What ``build_environment`` did for one instance's environment."""

    spec: EnvSpec
    name: str  # the environment's directory under the cache's envs/
    status: Status
    seconds: float
    env: Environment | None = None
    reason: str | None = None  # why it failed


def envs_root(cache_dir: Path | None = None) -> Path:
    return Path(cache_dir or default_cache_dir()).expanduser() / "envs"


def environment_for(
    instance: Instance,
    *,
    repos: Path | None = None,
    cache_dir: Path | None = None,
    rebuild: bool = False,
    sandbox: Sandbox | None = None,
) -> Environment:
    """The environment ``instance``'s tests run in, built or found; ``EnvironmentSetupError``
    (naming the instance) when it cannot be had, ``WorkspaceSetupError`` when its checkout
    cannot. For one instance; a run's many resolve theirs once, ahead (``stage.py``)."""
    if instance.path is not None:
        return harness_environment()
    try:
        build = build_environment(
            instance, repos=repos, cache_dir=cache_dir, rebuild=rebuild, sandbox=sandbox
        )
    except EnvironmentSetupError as exc:
        raise named(instance, exc) from None
    return ready(instance, build)


def harness_environment() -> Environment:
    """A bundled instance's: the harness's own interpreter, pytest's plugin autoloading off."""
    return Environment(sys.executable, plugin_autoload=False)


def named(instance: Instance, exc: EnvironmentSetupError) -> EnvironmentSetupError:
    """``exc`` (a spec file's or an interpreter's problem) naming ``instance``."""
    return type(exc)(f"{instance.instance_id}: {exc}")


def ready(instance: Instance, build: Build) -> Environment:
    """``instance``'s environment out of its build: ``EnvironmentSetupError`` naming the
    instance when the build failed, ``ClockUnavailable`` when its tests' clock cannot be set."""
    if build.env is None:
        raise EnvironmentSetupError(f"{instance.instance_id}: {build.reason}")
    day = clock_date(build.spec, instance)
    if not day:
        return build.env
    try:  # its tests cannot run without the library: say so before any does
        clock_env(day)
    except ClockUnavailable as exc:
        raise ClockUnavailable(f"{instance.instance_id}: {exc}") from None
    return dataclasses.replace(build.env, clock=day)


def clock_date(spec: EnvSpec, instance: Instance) -> str:
    """The date ``instance``'s tests run at (``spec.clock``), "" for the real clock (also when
    the spec asks for the instance's date and the row has none)."""
    if spec.clock == "created_at":
        return (instance.created_at or "")[:10]
    return spec.clock


def build_environment(
    instance: Instance,
    *,
    repos: Path | None = None,
    cache_dir: Path | None = None,
    rebuild: bool = False,
    sandbox: Sandbox | None = None,
    timeout: float = 1800.0,
) -> Build:
    """Build (or find cached, or find remembered as failed) the environment of ``instance``.
    A spec file or interpreter problem raises; a checkout problem raises
    ``WorkspaceSetupError``; a failed build step is returned (and remembered)."""
    start = time.monotonic()
    spec = spec_for(instance.repo, instance.version)
    commit = instance.environment_setup_commit or instance.base_commit
    checkout = cached_checkout(instance, repos=repos, cache_dir=cache_dir, commit=commit)
    if not has_spec(instance.repo, instance.version):
        spec = fit_to_checkout(spec, checkout)
    elif instance.mined_from is not None:
        spec = fit_to_checkout(spec, checkout, python=False)
    interpreter = find_python(spec.python, repo=instance.repo, repo_version=instance.version)
    cutoff = cutoff_date(spec, instance, checkout, commit)
    identity = f"{spec.key()}\0{commit}\0{os.path.realpath(interpreter)}\0{cutoff}"
    digest = hashlib.sha256(identity.encode()).hexdigest()[:12]
    name = f"{mirror_name(instance.repo)}-{safe_name(instance.version)}-{digest}"
    root = envs_root(cache_dir)
    home, meta_file, failed_file = root / name, root / f"{name}.json", root / f"{name}.failed.json"

    def done(status: Status, env: Environment | None = None, reason: str | None = None) -> Build:
        return Build(spec, name, status, round(time.monotonic() - start, 3), env, reason)

    builder = Builder(home, spec, interpreter, build_sandbox(sandbox), timeout, cutoff)
    with lock(root, name):
        if rebuild:
            meta_file.unlink(missing_ok=True)
            failed_file.unlink(missing_ok=True)
        meta = read_json(meta_file)
        if meta is not None and not os.path.lexists(home / VENV / "bin" / "python"):
            meta = None  # its directory was removed by hand: build it again
        status: Status = "cached"
        if meta is None:
            if (failed := still_failing(read_json(failed_file))) is not None:
                return done("failed", reason=remembered(f"environment {name}", failed))
            try:
                meta = builder.build(checkout, commit)
            except EnvironmentSetupError as exc:
                with contextlib.suppress(OSError):
                    remove_tree(home, within=root)
                write_json(failed_file, failure_record(exc, spec, commit))
                return done("failed", reason=f"environment {name} failed to build: {exc}")
            layers = home / LAYERS  # only the harness writes there: nothing the build left
            with contextlib.suppress(OSError, safefs.UnsafePath):
                remove_tree(layers, within=home)
            meta["build_s"] = round(time.monotonic() - start, 3)
            write_json(meta_file, meta)
            status = "built"
        if not isinstance(meta.get("pytest_plugins"), list):  # recorded before they were
            try:
                meta["pytest_plugins"] = builder.plugins()
            except EnvironmentSetupError as exc:
                return done("failed", reason=f"environment {name}: its pytest plugins: {exc}")
            write_json(meta_file, meta)
        env = _environment(meta, spec, home)
        if instance.base_commit == commit or not meta["spec"]["install"]:
            return done(status, env)
        # SWE-bench installs the repository at the base commit, into the environment of the
        # setup commit: what the base commit requires beyond it comes in a layer of its own.
        base = instance.base_commit
        layer_meta, layer_failed = (
            home / LAYERS / f"{base}.json",
            home / LAYERS / f"{base}.failed.json",
        )
        layer = read_json(layer_meta)
        if layer is None:
            if (failed := still_failing(read_json(layer_failed))) is not None:
                return done(
                    "failed", reason=remembered(f"base commit {base[:12]} of {name}", failed)
                )
            checkout = cached_checkout(instance, repos=repos, cache_dir=cache_dir)
            try:
                src_layout = "src" in env.repo_paths
                layer = builder.top_up(checkout, base, commit, env.generated, src_layout)
            except EnvironmentSetupError as exc:
                write_json(layer_failed, failure_record(exc, spec, base))
                return done("failed", reason=f"base commit {base[:12]} of {name}: {exc}")
            write_json(layer_meta, layer)
            status = "built"
        extra = (str(home / layer["site"]),) if layer.get("site") == layer_site(base) else ()
        env = dataclasses.replace(env, extra_paths=extra)
        compiled = layer.get("compiled")
        if layer.get("ext") == layer_ext(base) and isinstance(compiled, list):
            # The base commit's own compiled modules, in place of the setup commit's.
            env = dataclasses.replace(
                env, overlay=str(home / layer["ext"]), overlay_files=tuple(map(str, compiled))
            )
        return done(status, env)


def _environment(meta: Mapping[str, Any], spec: EnvSpec, home: Path) -> Environment:
    generated = meta.get("generated", [])
    return Environment(
        python=str(home / VENV / "bin" / "python"),
        repo_paths=tuple(meta["repo_paths"]),
        plugins=tuple(str(p) for p in meta.get("pytest_plugins") or ()),
        spec=spec,
        generated=tuple(str(p) for p in generated) if isinstance(generated, list) else (),
        home=str(home),
        testbed=bool(meta.get("testbed")),
    )


def cutoff_date(spec: EnvSpec, instance: Instance, checkout: Path, commit: str) -> str | None:
    """The ``--exclude-newer`` date of unpinned dependencies (``spec.exclude_newer``): the day
    after the setup commit's, or the instance's creation date, or the spec's own; None for
    ``none``. A date only (``YYYY-MM-DD``): the same spec and commit give the same build."""
    rule = spec.exclude_newer
    if rule == "none":
        return None
    if rule == "created_at":
        day = (instance.created_at or "")[:10]
        return day or None
    if rule != "setup_commit":
        return rule
    out = hostgit.run(
        ["log", "-1", "--format=%cs", commit], cwd=checkout, error=EnvironmentSetupError
    ).text.strip()
    try:
        when = datetime.date.fromisoformat(out)
    except ValueError:
        raise EnvironmentSetupError(f"the date of commit {commit}: {out!r}") from None
    return (when + datetime.timedelta(days=1)).isoformat()


def list_environments(cache_dir: Path | None = None) -> list[dict[str, Any]]:
    """Each cached environment's record (``status`` built or failed, ``name``), by name."""
    root = envs_root(cache_dir)
    rows = []
    for path in sorted(root.glob("*.json")) if root.is_dir() else []:
        data = read_json(path)
        if data is None:
            continue
        failed = path.name.endswith(".failed.json")
        name = path.name.removesuffix(".failed.json" if failed else ".json")
        rows.append({**data, "name": name, "status": "failed" if failed else "built"})
    return rows
