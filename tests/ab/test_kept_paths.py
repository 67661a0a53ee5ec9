"""The A/B's old module paths are kept for one release (``pytest_toolpolicy/ab/``): each old
module re-exports its names from where they live now, the very same objects, and the old
package itself imports nothing (no pytest)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import pytest_toolpolicy

KEPT = sorted(p.stem for p in (Path(pytest_toolpolicy.__file__).parent / "ab").glob("*.py"))
# What the README and reports/decision.ipynb imported from the old paths, and where it is now.
DOCUMENTED = {
    "render": ("decide.render", ["render_text", "render_markdown", "render_html"]),
    "schema": ("decide.variants", ["gate_of", "item_of", "variant_order"]),
    "table": ("decide.table", ["decision_table"]),
    "results": ("run.rebuild", ["results_from_trajectories"]),
    "pipeline": ("run.pipeline", ["RunSetup", "run_instance", "RunRecord"]),
    "decision": ("decide.decision", ["decide", "no_decision_reason"]),
    "ablation": ("decide.ablation", ["ablate", "no_change_flags"]),
    "row": ("decide.variants", ["ItemSpec"]),
}


def test_every_old_module_is_kept() -> None:
    assert len(KEPT) == 38 and {"__init__", "session", "table", "row"} <= set(KEPT)


@pytest.mark.parametrize("old", sorted(DOCUMENTED))
def test_a_documented_name_is_the_same_object_at_both_paths(old: str) -> None:
    new, names = DOCUMENTED[old]
    was = importlib.import_module(f"pytest_toolpolicy.ab.{old}")
    now = importlib.import_module(f"pytest_toolpolicy.{new}")
    assert was.__doc__ and "kept for one release" in was.__doc__
    for name in names:
        assert getattr(was, name) is getattr(now, name), name


def test_the_old_table_keeps_its_star_names() -> None:
    table = importlib.import_module("pytest_toolpolicy.ab.table")
    assert table.__all__ == [
        "decision_table", "meta_from", "render_markdown", "render_text", "write_report",
    ]  # fmt: skip
    assert all(callable(getattr(table, name)) for name in table.__all__)


def test_the_old_package_imports_no_pytest() -> None:
    code = "import sys, pytest_toolpolicy.ab; print('pytest' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "False"
