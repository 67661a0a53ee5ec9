import sys
from pathlib import Path

import pytest

from pytest_toolpolicy.primitives import volatile
from pytest_toolpolicy.primitives.volatile import PREFIX_MARK, mask_volatile, without_volatile
from pytest_toolpolicy.primitives.workspace import Workspace


def test_pytest_summary_durations_are_masked() -> None:
    assert mask_volatile("1 failed, 2 passed in 0.12s") == "1 failed, 2 passed in ?s"
    assert mask_volatile("= 3 passed in 75.02s (0:01:15) =") == "= 3 passed in ?s ="
    assert mask_volatile("no tests ran in 0.01s") == "no tests ran in ?s"
    assert mask_volatile("it ran in 0.5s") == "it ran in 0.5s"  # not a pytest summary


def test_memory_addresses_and_the_interpreter_prefix_are_masked() -> None:
    text = f"<Store object at 0x7f4661a7a690>\n{sys.prefix}/lib/site.py:1: in f"
    assert mask_volatile(text) == f"<Store object at 0x…>\n{PREFIX_MARK}/lib/site.py:1: in f"
    assert mask_volatile("x = 0x10") == "x = 0x10"  # a literal, not an address in a repr


def test_without_volatile_drops_timings_at_any_depth_and_keeps_the_rest() -> None:
    data = {
        "ok": True,
        "data": {"duration_s": 0.41, "exit_code": 1, "output": "1 failed in 0.40s"},
        "runs": [{"duration_s": 1.0, "passed": False}],
    }
    assert without_volatile(data) == {
        "ok": True,
        "data": {"exit_code": 1, "output": "1 failed in ?s"},
        "runs": [{"passed": False}],
    }
    assert data["data"]["duration_s"] == 0.41  # the capture itself is untouched


def test_an_items_workspace_is_shown_relative_wherever_it_runs(tmp_path: Path) -> None:
    # pytest prints its rootdir: an absolute path below the report's own directory, which would
    # make a recording miss when replayed from another report directory or machine.
    shown = []
    for report in ("first-0123456789ab", "second-ba9876543210"):
        root = tmp_path / report / "memstore-4-current" / "repo"
        root.mkdir(parents=True)
        (root / "pyproject.toml").write_text("")
        Workspace.create(root)
        output = f"rootdir: {root}\nconfigfile: {root}/pyproject.toml\n{root}2/x is another"
        shown.append(mask_volatile(output))
    assert shown[0] == "rootdir: .\nconfigfile: pyproject.toml\n" + shown[0].split("\n")[2]
    assert shown[0].split("\n")[:2] == shown[1].split("\n")[:2]
    assert "first-0123456789ab/memstore-4-current/repo2/x" in shown[0]  # not its workspace


def test_past_the_bound_the_oldest_workspace_is_forgotten(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(volatile, "_ROOTS", {})
    monkeypatch.setattr(volatile, "_LONGEST_FIRST", [])
    monkeypatch.setattr(volatile, "MAX_ROOTS", 2)
    for root in ("/w/a-very-long-first/repo", "/w/b/repo", "/w/c/repo"):
        volatile.mask_workspace(root)
    shown = mask_volatile("/w/a-very-long-first/repo/x /w/b/repo/y /w/c/repo/z")
    assert shown == "/w/a-very-long-first/repo/x y z"
