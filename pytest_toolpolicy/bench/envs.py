"""The Python environment an instance's tests run in.

Bundled instances need only the standard library and pytest: the current interpreter, with
pytest's plugin autoloading off, so that whatever else the harness's environment holds (and
pays to import) cannot change their outcome.

A real repository gets a venv per (repo, version, interpreter), cached under
``$TOOLPOLICY_CACHE_DIR/envs``, with the repo installed editable from its cached checkout (plus
pytest). The editable install is made in setuptools' ``compat`` mode, which puts plain path
entries (the checkout, or its ``src/``) on ``sys.path``; at grading time those entries are moved
from the cached checkout to the item's own workspace and put first, so the tests import the
workspace's code while the venv supplies the dependencies.

The interpreter, first match wins: the ``python`` argument; ``TOOLPOLICY_PYTHON``, a comma
separated list of ``owner/name@version=PATH``, ``owner/name=PATH`` and one bare ``PATH`` (the
default), e.g. ``django/django=python3.9,python3.11``; the interpreter running the harness.

venv and pip run with an environment built from an allow-list (``_PASSED``): what locates
tools, caches, proxies, certificates and pip's own settings, never the harness's API keys.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..primitives.bwrap import resolve_python
from .workspaces import cache_root, cached_checkout, mirror_name

if TYPE_CHECKING:
    from .instance import Instance

_META = "toolpolicy-env.json"
# What pip and a build backend may need from the host environment; everything else (API keys,
# the harness's own venv and PYTHONPATH) stays out.
_PASSED = frozenset(
    {
        "PATH", "HOME", "USER", "LOGNAME", "LANG", "TMPDIR", "TZ", "SOURCE_DATE_EPOCH",
        "XDG_CACHE_HOME", "XDG_CONFIG_HOME",
        "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
        "http_proxy", "https_proxy", "no_proxy", "all_proxy",
        "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
    }
)  # fmt: skip
_PASSED_PREFIXES = ("LC_", "PIP_")
_SYS_PATH = "import json, sys; print(json.dumps(sys.path))"


class EnvironmentSetupError(Exception):
    """The environment could not be built: an infrastructure error, with pip's last lines."""


@dataclass(frozen=True)
class Environment:
    python: str
    # sys.path entries of the installed repo, relative to its checkout ("." or "src").
    repo_paths: tuple[str, ...] = ()
    plugin_autoload: bool = True

    def pythonpath(self, root: Path) -> tuple[str, ...]:
        """The repo's import paths inside the workspace ``root``."""
        return tuple(str((root / rel).resolve()) for rel in self.repo_paths)


def choose_python(
    repo: str, version: str = "", python: str | None = None, environ: Mapping[str, str] = os.environ
) -> str:
    if python:
        return resolve_python(python)
    default, mapping = None, {}
    for item in filter(None, (p.strip() for p in environ.get("TOOLPOLICY_PYTHON", "").split(","))):
        key, sep, path = item.rpartition("=")
        if sep:
            mapping[key.strip()] = path.strip()
        else:
            default = path
    chosen = mapping.get(f"{repo}@{version}") or mapping.get(repo) or default
    return resolve_python(chosen) if chosen else sys.executable


def environment_for(
    instance: Instance,
    *,
    repos: Path | None = None,
    cache_dir: Path | None = None,
    python: str | None = None,
) -> Environment:
    if instance.path is not None:
        return Environment(sys.executable, plugin_autoload=False)
    checkout = cached_checkout(instance, repos=repos, cache_dir=cache_dir)
    return ensure_env(instance.repo, instance.version, checkout, python=python, cache_dir=cache_dir)


def ensure_env(
    repo: str,
    version: str,
    checkout: Path,
    *,
    python: str | None = None,
    cache_dir: Path | None = None,
    requirements: Sequence[str] = ("pytest",),
    pip_args: Sequence[str] = (),
    timeout: float = 1800,
) -> Environment:
    """The cached venv for (repo, version, interpreter), built on first use under a lock."""
    interpreter = choose_python(repo, version, python)
    tag = hashlib.sha256(os.path.realpath(interpreter).encode()).hexdigest()[:10]
    venv = cache_root(cache_dir).parent / "envs" / f"{mirror_name(repo)}-{version}-{tag}"
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f".{venv.name}.lock", "w") as lock:
        # A lock, not a rename: a venv's scripts hold its absolute path, and it is slow to build.
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (venv / _META).is_file():
            shutil.rmtree(venv, ignore_errors=True)  # a build that died half-way
            _build(venv, interpreter, Path(checkout), requirements, pip_args, timeout)
    meta = json.loads((venv / _META).read_text(encoding="utf-8"))
    return Environment(str(venv / "bin" / "python"), tuple(meta["repo_paths"]))


def _build(
    venv: Path,
    interpreter: str,
    checkout: Path,
    requirements: Sequence[str],
    pip_args: Sequence[str],
    timeout: float,
) -> None:
    _step("create the venv", [interpreter, "-m", "venv", str(venv)], timeout)
    python = str(venv / "bin" / "python")
    pip = [python, "-m", "pip", "install", "-q", "--disable-pip-version-check", *pip_args]
    editable = ["--config-settings", "editable_mode=compat", "-e", str(checkout)]
    _step(f"install {checkout.name}", [*pip, *editable, *requirements], timeout)
    out = _step("read sys.path", [python, "-I", "-c", _SYS_PATH], timeout)
    root = checkout.resolve()
    rel = [os.path.relpath(p, root) for p in json.loads(out) if _under(Path(p), root)]
    meta = {"repo_paths": rel or ["."], "checkout": str(root), "interpreter": interpreter}
    (venv / _META).write_text(json.dumps(meta), encoding="utf-8")


def _under(path: Path, root: Path) -> bool:
    path = path.resolve() if path.is_absolute() else path
    return path == root or root in path.parents


def scrubbed_environ(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    return {k: v for k, v in environ.items() if k in _PASSED or k.startswith(_PASSED_PREFIXES)}


def _step(what: str, argv: list[str], timeout: float) -> str:
    try:
        proc = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            env=scrubbed_environ(),
        )
    except subprocess.TimeoutExpired:
        raise EnvironmentSetupError(f"{what}: timed out after {timeout:g}s") from None
    if proc.returncode:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-12:])
        raise EnvironmentSetupError(f"{what} failed (exit {proc.returncode}):\n{tail}")
    return proc.stdout
