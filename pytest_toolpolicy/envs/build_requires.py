"""What an isolated build of a checkout installs first, read from its ``pyproject.toml``.

pip builds a project (and any dependency it has only as an sdist) in an isolated environment
of the build requirements, fetched from the index as they are *today*: a 2019 checkout's
editable build importing ``setuptools.dep_util`` (gone from setuptools 70), a pinned numpy
built from its sdist under today's setuptools (``CCompiler`` no longer there). The builder
resolves these requirements as of the environment's cutoff, wheels first, and holds the
isolated builds to them (``Builder.era_constraints``). Pure functions.
"""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

# What pip's isolation installs for a project with no [build-system] table (PEP 517's default
# for legacy setup.py projects).
LEGACY = ("setuptools>=40.8.0", "wheel")
# setuptools 64 brought PEP 660's ``build_editable``; pip 25.3 dropped the fallback to
# ``setup.py develop`` for a back-end without it: an editable install held to an older
# setuptools needs a pip from before that.
EDITABLE_SETUPTOOLS = (64, 0)
LEGACY_PIP = "pip<25.3"


def build_requires(pyproject: str | None) -> list[str]:
    """The ``[build-system] requires`` of ``pyproject`` (its text; None without the file), or
    what pip assumes without one."""
    if not pyproject:
        return list(LEGACY)
    try:
        table = tomllib.loads(pyproject)
    except (tomllib.TOMLDecodeError, RecursionError):
        return list(LEGACY)
    system = table.get("build-system")
    requires = system.get("requires") if isinstance(system, dict) else None
    if not isinstance(requires, list) or not all(isinstance(r, str) for r in requires):
        return list(LEGACY)
    return [r for r in requires if r.strip()]


def legacy_editable(constraints: list[str]) -> bool:
    """Whether ``constraints`` (``name==version`` lines) hold setuptools below PEP 660's."""
    for line in constraints:
        name, _, version = line.partition("==")
        if name.strip().lower() == "setuptools":
            numbers = [int(p) for p in version.split(".")[:2] if p.isdigit()]
            return tuple(numbers) < EDITABLE_SETUPTOOLS
    return False
