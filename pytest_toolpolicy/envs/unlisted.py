"""A spec fitted to a checkout of a version the specs do not list (an instance mined from a
repository's newer history, or from a repository with no entry at all).

The repository's table (or the default) was written for other versions. Two things the checkout
itself declares, read as data and never run, fit it to this one:

- the interpreter (``requires_python.py``): the spec's where the checkout admits it, else the
  lowest installed one it does (pytest 9 needs 3.10; its table says 3.9);
- the tests' own dependencies: where the install is a plain ``pip install -e .`` and the
  checkout declares an extra named ``testing``, ``test``, ``tests`` or ``dev`` (first found,
  in ``pyproject.toml``'s ``[project.optional-dependencies]`` or ``setup.cfg``'s
  ``[options.extras_require]``), the install takes it (pytest's own tests need ``attrs`` and
  ``hypothesis`` from its ``dev`` extra).

Each change is listed in the spec's ``substitutions``. An instance mined from a version the
specs do list gets the test extra alone: SWE-bench's tables install what its rows' tests need,
and a change from the same history may touch others (pytest's tests of hypothesis-based
parametrization, of junitxml's schema).
"""

from __future__ import annotations

import configparser
import dataclasses
import re
from collections.abc import Callable
from pathlib import Path

import tomllib

from .interpreters import InterpreterMissing
from .requires_python import choose, declared, installed_versions, reader
from .spec import EnvSpec

TEST_EXTRAS = ("testing", "test", "tests", "dev")
_PLAIN_EDITABLE = re.compile(r"^(python3? -m )?pip3? install -e \.$")


def fit_to_checkout(spec: EnvSpec, checkout: Path, *, python: bool = True) -> EnvSpec:
    """``python=False``: the test extra alone (a listed version's interpreter is known to
    work; a change mined from its history may touch tests its table never ran)."""
    read = reader(checkout)
    if python:
        spec = _python(spec, read)
    extra = declared_test_extra(read)
    if extra and _PLAIN_EDITABLE.match(" ".join(spec.install.split())):
        why = f"install -e .[{extra}]: the checkout's own test dependencies"
        install = f"{spec.install}[{extra}]"
        spec = dataclasses.replace(spec, install=install, substitutions=(*spec.substitutions, why))
    return spec


def _python(spec: EnvSpec, read: Callable[[str], str | None]) -> EnvSpec:
    needs = declared(read)
    if needs is None:
        return spec
    picked = choose(spec.python, needs, installed_versions())
    if picked is None:
        raise InterpreterMissing(
            f"{spec.describe()}: the checkout declares Python {needs}, and no installed "
            "interpreter satisfies it (pyenv install one)"
        )
    if picked == spec.python:
        return spec
    why = f"python {spec.python or 'of the harness'} -> {picked}: the checkout requires {needs}"
    return dataclasses.replace(spec, python=picked, substitutions=(*spec.substitutions, why))


def declared_test_extra(read: Callable[[str], str | None]) -> str | None:
    """The first of ``TEST_EXTRAS`` the checkout declares, or None."""
    names: set[str] = set()
    text = read("pyproject.toml")
    if text:
        try:
            extras = tomllib.loads(text).get("project", {}).get("optional-dependencies", {})
        except (tomllib.TOMLDecodeError, AttributeError):
            extras = {}
        names |= set(extras) if isinstance(extras, dict) else set()
    text = read("setup.cfg")
    if text:
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(text)
            if parser.has_section("options.extras_require"):
                names |= set(parser.options("options.extras_require"))
        except configparser.Error:
            pass
    return next((e for e in TEST_EXTRAS if e in names), None)
