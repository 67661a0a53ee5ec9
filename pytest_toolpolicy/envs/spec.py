"""What an instance's environment is made of, per repository and version: ``EnvSpec``.

The shipped specs (``specs/`` beside this file: ``default.toml`` and one ``owner__name.toml``
per repository) are SWE-bench's harness specs, kept as data: swebench 4.x ships them as ``MAP_REPO_VERSION_TO_SPECS``, 5.x no longer does, and
``import swebench.harness`` needs docker and modal. A user file (``user_file``, else
``TOOLPOLICY_ENV_SPECS=PATH``) has the same schema and overrides or adds entries.

Schema (every level optional)::

    source = "where these specs come from"
    [default]                      # any repository with no entry of its own
    python = "3.9"                 # "" = the harness's own interpreter
    pip_packages = ["pytest"]
    [repo."owner/name"]            # its versions' defaults
    install = "python -m pip install -e ."
    [[repo."owner/name".spec]]     # one or more versions
    versions = ["5.0", "5.1"]
    pip_packages = ["pluggy==0.13.1"]

A field comes from the most specific level that sets it, the user file's winning at equal
specificity: shipped default < user default < shipped repo < user repo < shipped version <
user version. A bad file is an ``EnvSpecError`` naming the file and the key.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from .runners import RUNNERS

SPECS_ENV = "TOOLPOLICY_ENV_SPECS"
SHIPPED = Path(__file__).with_name("specs")
# SWE-bench's log parsers (harness/log_parsers/python.py), by the name its specs use for each:
# one record each (runners.py).
LOG_PARSERS = tuple(RUNNERS)
_LISTS = (
    "pip_packages", "requirements", "fallback_packages", "pre_install", "pip_first", "apt",
    "submodules", "substitutions", "runner_files", "build_constraints",
)  # fmt: skip
# Fields added since _BUILD_SCHEMA "2": in the key only when set, so that environments built
# before them keep their names.
_LATER = ("build_constraints",)
_TEXTS = ("python", "install", "test_cmd", "log_parser", "exclude_newer", "clock")
_TABLES = ("test_env",)
_INTS = ("build_mb",)
FIELDS = (*_TEXTS, *_LISTS, *_TABLES, *_INTS)
# A cutoff for what an unpinned dependency resolves to: the environment setup commit's date
# (the default), the instance's creation date, none, or a date of the spec's own.
_EXCLUDE_NEWER = re.compile(r"setup_commit|created_at|none|\d{4}-\d{2}-\d{2}")
_CLOCK = re.compile(r"created_at|\d{4}-\d{2}-\d{2}")
# Bumped when the way an environment is built from a spec changes: old builds are then stale.
# 4: the resolved requirements installed exactly (--no-deps), what only exact pins need not
# cut off, setuptools held below 71 in what is resolved.
_BUILD_SCHEMA = "4"
_PYTHON = re.compile(r"\d+\.\d+")
_REPO = re.compile(r"[\w.\-]+/[\w.\-]+")
_PACKAGING = ("setup.py", "setup.cfg", "pyproject.toml")
# An install of the checkout itself: nothing to run where the checkout has no packaging.
_INSTALL_SELF = re.compile(r"(python -m )?pip install( -e| --editable)? \.(\[[\w,\-]*\])?")


class EnvironmentSetupError(Exception):
    """The environment could not be built: an infrastructure error, with the reason."""


class EnvSpecError(EnvironmentSetupError):
    """A spec file that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class EnvSpec:
    repo: str
    version: str
    python: str = ""  # "X.Y"; "" = the interpreter running the harness
    pip_packages: tuple[str, ...] = ()
    # Repo-relative requirement files: the first the checkout has is installed, as SWE-bench
    # installs it (``requirements.py``).
    requirements: tuple[str, ...] = ()
    # Installed instead when none of ``requirements`` exists in the checkout.
    fallback_packages: tuple[str, ...] = ()
    pre_install: tuple[str, ...] = ()  # shell commands run in the checkout before ``install``
    install: str = ""  # "" = nothing installed: tests run from the checkout
    test_cmd: str = "pytest -rA"
    log_parser: str = "pytest"  # SWE-bench's log parser whose test-id conventions apply
    source: str = ""
    # Installed before everything else (an old interpreter's pip, too old to read
    # Requires-Python, replaced first).
    pip_first: tuple[str, ...] = ()
    apt: tuple[str, ...] = ()  # Debian packages the build or the tests need, checked first
    submodules: tuple[str, ...] = ()  # git submodule paths the build needs in the checkout
    # Each change from SWE-bench's own spec (a conda-only pin, a pin with no wheel here), why.
    substitutions: tuple[str, ...] = ()
    # What unpinned dependencies resolve to: releases no newer than the environment setup
    # commit's date (``setup_commit``: an environment is built at that commit, so the same
    # spec builds the same next year), the instance's date (``created_at``), a date
    # ("2021-06-01"), or ``none``.
    exclude_newer: str = "setup_commit"
    # Variables every test run of this spec gets (sympy's PYTHONWARNINGS, a locale).
    test_env: tuple[tuple[str, str], ...] = ()
    # Files of the repository's own test runner (``tests/runtests.py``, ``bin/test``): what
    # decides how tests run, put back before grading like any test configuration.
    runner_files: tuple[str, ...] = ()
    build_mb: int = 4096  # disk a build may use (the venv, the checkout, pip's cache)
    # Bounds on what an isolated build of an sdist may install (``setuptools==68.0.0`` for a
    # setup.py that imports pkg_resources): uv's --build-constraint, pip's PIP_CONSTRAINT.
    build_constraints: tuple[str, ...] = ()
    # The date the tests' clock reads (``clock.py``): the instance's (``created_at``) or a
    # date, for data in the repository that expires (astropy's leap-second table, stale a few
    # months after the commit, fails tests whose warnings are errors). Not part of what is
    # built; "" = the real clock.
    clock: str = ""

    def key(self) -> str:
        """A stable hash of every field that changes what gets built (not the version label,
        the test command, the log parser or where the spec came from)."""
        unbuilt = ("substitutions", "runner_files")
        build = {
            f: getattr(self, f)
            for f in ("repo", "python", *_LISTS, "install", "exclude_newer")
            if f not in unbuilt and (f not in _LATER or getattr(self, f))
        }
        text = json.dumps([_BUILD_SCHEMA, build], sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def resolved(self, exists: Callable[[str], bool]) -> EnvSpec:
        """This spec for one checkout (``exists(rel)``: does it have that file): the first
        requirement file it has kept, the rest dropped (``fallback_packages`` added when it has none), and an install
        of the checkout itself dropped when it has no packaging at all."""
        # The first the checkout has, as SWE-bench's images take it.
        present = next(((r,) for r in self.requirements if exists(r)), ())
        packages = self.pip_packages
        if self.requirements and not present:
            packages += tuple(p for p in self.fallback_packages if p not in packages)
        install = self.install
        if _INSTALL_SELF.fullmatch(" ".join(install.split())) and not any(
            exists(f) for f in _PACKAGING
        ):
            install = ""
        return dataclasses.replace(
            self, pip_packages=packages, requirements=present, install=install
        )

    def describe(self) -> str:
        return f"{self.repo} {self.version}".strip()


def spec_for(repo: str, version: str, user_file: Path | str | None = None) -> EnvSpec:
    """The spec of ``repo`` at ``version``: the shipped specs with the user's over them."""
    layers = _layers(user_file)
    # (fields, label, from the user file) of each level that has an entry, least specific first.
    levels = [
        (layer.default, f"{layer.label}: default", layer.user) for layer in layers if layer.default
    ]
    levels += [
        (layer.repos[repo], f"{layer.label}: {repo}", layer.user)
        for layer in layers
        if repo in layer.repos
    ]
    levels += [
        (layer.versions[(repo, version)], f"{layer.label}: {repo} {version}", layer.user)
        for layer in layers
        if (repo, version) in layer.versions
    ]
    fields: dict[str, Any] = {}
    for values, _, _ in levels:
        fields.update(values)
    _, source, by_user = levels[-1] if levels else ({}, "", False)
    if not by_user and any(user and values for values, _, user in levels):
        source += f", with overrides from {layers[-1].label}"
    return EnvSpec(repo=repo, version=version, source=source, **fields)


def listed_versions(repo: str, user_file: Path | str | None = None) -> set[str]:
    """The versions the specs (shipped and the user's) list for ``repo``."""
    return {v for layer in _layers(user_file) for (r, v) in layer.versions if r == repo}


def has_spec(repo: str, version: str, user_file: Path | str | None = None) -> bool:
    """Whether anything was written for ``repo`` at ``version``, beyond the shipped default: a
    version entry (shipped or the user's), or the user's own table for the repository or
    default. A shipped repository table alone does not count: SWE-bench lists the versions it
    knows how to build."""
    return any(
        (repo, version) in layer.versions
        or (layer.user and (repo in layer.repos or bool(layer.default)))
        for layer in _layers(user_file)
    )


def shipped_repos() -> list[str]:
    """The repositories the shipped specs have an entry for."""
    return sorted({repo for layer in _shipped() for repo in layer.repos})


def _layers(user_file: Path | str | None) -> list[_Layer]:
    path = user_file or os.environ.get(SPECS_ENV) or None
    return [*_shipped(), *([_load(Path(path).expanduser(), user=True)] if path else [])]


def _shipped() -> list[_Layer]:
    """The shipped files, the default first. A repository's file holds that repository only,
    so that no two files can disagree about one."""
    files = sorted(SHIPPED.glob("*.toml"), key=lambda f: (f.name != "default.toml", f.name))
    layers = [_load(f, user=False) for f in files]
    for path, layer in zip(files, layers, strict=True):
        own = set() if path.name == "default.toml" else {path.stem.replace("__", "/", 1)}
        stray = sorted(set(layer.repos) - own)
        if stray or (own and layer.default):
            what = f"repo.{stray[0]!r}" if stray else "default"
            raise EnvSpecError(f"environment spec file {path}: {what}: not this file's to set")
    return layers


@dataclass(frozen=True)
class _Layer:
    label: str
    user: bool
    default: Mapping[str, Any]
    repos: Mapping[str, Mapping[str, Any]]
    versions: Mapping[tuple[str, str], Mapping[str, Any]]


def _load(path: Path, user: bool) -> _Layer:
    try:
        info = path.stat()
    except OSError as exc:
        raise EnvSpecError(
            f"environment spec file {path}: cannot read it ({exc.strerror})"
        ) from None
    return _load_cached(str(path), user, info.st_mtime_ns, info.st_size)


@functools.lru_cache(maxsize=32)
def _load_cached(path: str, user: bool, mtime_ns: int, size: int) -> _Layer:
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except OSError as exc:
        raise EnvSpecError(f"environment spec file {path}: cannot read it ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise EnvSpecError(f"environment spec file {path}: not valid TOML: {exc}") from None
    return _parse(path, data, user)


def _parse(path: str, data: Mapping[str, Any], user: bool) -> _Layer:
    def error(key: str, problem: str) -> EnvSpecError:
        return EnvSpecError(f"environment spec file {path}: {key}: {problem}")

    unknown = sorted(set(data) - {"source", "default", "repo"})
    if unknown:
        raise error(unknown[0], "unknown key (expected source, default, repo)")
    source = data.get("source", "")
    if not isinstance(source, str):
        raise error("source", f"expected a string, got {type(source).__name__}")
    name = f"user file {path}" if user else f"specs/{Path(path).name}"
    label = f"{name} ({source})" if source else name
    default = _fields(data.get("default", {}), "default", error)
    repos: dict[str, Mapping[str, Any]] = {}
    versions: dict[tuple[str, str], Mapping[str, Any]] = {}
    table = data.get("repo", {})
    if not isinstance(table, dict):
        raise error("repo", "expected a table of repositories")
    for repo, entry in table.items():
        where = f'repo."{repo}"'
        if not _REPO.fullmatch(repo):
            raise error(where, "not a repository name (owner/name)")
        if not isinstance(entry, dict):
            raise error(where, "expected a table")
        specs = entry.get("spec", [])
        repos[repo] = _fields({k: v for k, v in entry.items() if k != "spec"}, where, error)
        if not isinstance(specs, list):
            raise error(f"{where}.spec", "expected an array of tables ([[...spec]])")
        for n, spec in enumerate(specs):
            at = f"{where}.spec[{n}]"
            if not isinstance(spec, dict):
                raise error(at, "expected a table")
            listed = spec.get("versions")
            if not _strings(listed) or not listed:
                raise error(f"{at}.versions", "expected a non-empty list of version strings")
            fields = _fields({k: v for k, v in spec.items() if k != "versions"}, at, error)
            for version in listed:
                if (repo, version) in versions:
                    raise error(f"{at}.versions", f"version {version!r} is listed twice")
                versions[(repo, version)] = fields
    return _Layer(label, user, default, repos, versions)


def _fields(
    entry: object, where: str, error: Callable[[str, str], EnvSpecError]
) -> Mapping[str, Any]:
    if not isinstance(entry, dict):
        raise error(where, "expected a table")
    out: dict[str, Any] = {}
    for key, value in entry.items():
        at = f"{where}.{key}"
        if key in _LISTS:
            if not _strings(value):
                raise error(at, f"expected a list of strings, got {_kind(value)}")
            out[key] = tuple(value)
        elif key in _TEXTS:
            if not isinstance(value, str):
                raise error(at, f"expected a string, got {_kind(value)}")
            out[key] = value
        elif key in _TABLES:
            if not isinstance(value, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in value.items()
            ):
                raise error(at, f"expected a table of strings, got {_kind(value)}")
            out[key] = tuple(sorted(value.items()))
        elif key in _INTS:
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise error(at, f"expected a positive integer, got {value!r}")
            out[key] = value
        else:
            raise error(at, f"unknown key (expected one of {', '.join(FIELDS)})")
    if out.get("python") and not _PYTHON.fullmatch(out["python"]):
        raise error(f"{where}.python", f'expected "X.Y" or "", got {out["python"]!r}')
    if "exclude_newer" in out and not _EXCLUDE_NEWER.fullmatch(out["exclude_newer"]):
        raise error(
            f"{where}.exclude_newer",
            f"expected created_at, setup_commit, none or YYYY-MM-DD, got {out['exclude_newer']!r}",
        )
    if out.get("clock") and not _CLOCK.fullmatch(out["clock"]):
        raise error(
            f"{where}.clock", f'expected "", created_at or YYYY-MM-DD, got {out["clock"]!r}'
        )
    if "log_parser" in out and out["log_parser"] not in RUNNERS:
        raise error(f"{where}.log_parser", f"expected one of {', '.join(RUNNERS)}")
    return out


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _kind(value: object) -> str:
    return type(value).__name__
