"""``decide/`` is the pure analysis of rows into the decision table: a notebook imports any of its
modules with nothing of pytest or the harness (no sandbox, git, models, arms). Each module is
imported in a fresh interpreter and what it loaded read off ``sys.modules``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest_toolpolicy

PACKAGE = Path(pytest_toolpolicy.__file__).parent
DECIDE = sorted(p.stem for p in (PACKAGE / "decide").glob("*.py"))
HARNESS = ("primitives", "envs", "grading", "models", "agents", "run", "session")
FORBIDDEN = ("pytest", "_pytest", *(f"pytest_toolpolicy.{part}" for part in HARNESS))


def loaded_after(*modules: str) -> list[str]:
    """The modules a fresh interpreter holds after importing ``modules``."""
    code = (
        "import importlib, json, sys\n"
        f"for name in {list(modules)!r}:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return list(json.loads(done.stdout))


def forbidden(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == f or m.startswith(f + ".") for f in FORBIDDEN)]


def test_every_module_of_decide_is_checked() -> None:
    assert len(DECIDE) > 25 and {"__init__", "table", "render", "schema"} <= set(DECIDE)


def test_no_module_of_decide_imports_anything_of_the_harness() -> None:
    """All of them in one interpreter: whatever one of them brings in stays in sys.modules."""
    names = ["pytest_toolpolicy.decide" + ("" if n == "__init__" else f".{n}") for n in DECIDE]
    assert forbidden(loaded_after(*names)) == []


def test_the_check_sees_the_harness_where_it_is_imported() -> None:
    # run/row.py reads a trajectory with the arms' own reply parsers: the harness comes along.
    found = forbidden(loaded_after("pytest_toolpolicy.run.row"))
    assert "pytest_toolpolicy.primitives" in found and "pytest" not in found
    assert "pytest" in forbidden(loaded_after("pytest_toolpolicy.session.session"))


def test_the_gold_sources_written_out_are_bench_s_own() -> None:
    # decide/schema.py writes them out: importing bench would import the harness.
    from pytest_toolpolicy.bench.gold_source import DERIVED, HAND, NONE, SOURCES
    from pytest_toolpolicy.decide.schema import GOLD_DERIVED, GOLD_HAND, GOLD_NONE, GOLD_SOURCES

    assert (GOLD_HAND, GOLD_DERIVED, GOLD_NONE, GOLD_SOURCES) == (HAND, DERIVED, NONE, SOURCES)
