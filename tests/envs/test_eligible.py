"""Which instances can run here: the exclusion happens before a seeded sample is drawn."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_toolpolicy.bench import load_instances
from pytest_toolpolicy.envs.eligible import runnable_here
from pytest_toolpolicy.envs.spec import SPECS_ENV

# The 3 complete SWE-bench Verified rows, committed (tests/data/swebench/README.md).
FULL = Path(__file__).resolve().parents[1] / "data" / "swebench" / "verified_full_sample.jsonl"


@pytest.fixture
def rows(tmp_path: Path) -> str:
    """The 3 real rows (flask 2.3, requests 1.1 and 2.4) plus one of a repo without a spec."""
    lines = FULL.read_text(encoding="utf-8").splitlines()
    other = json.loads(lines[0]) | {"instance_id": "acme__widget-1", "repo": "acme/widget"}
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join([*lines, json.dumps(other)]) + "\n", encoding="utf-8")
    return str(path)


def test_no_mirror_and_no_spec_are_excluded_with_the_reason(
    rows: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(SPECS_ENV, raising=False)
    mirrors = tmp_path / "mirrors"
    (mirrors / "psf__requests").mkdir(parents=True)
    (mirrors / "acme__widget").mkdir()
    result = load_instances(rows, exclude=runnable_here(mirrors))
    assert [i.instance_id for i in result.instances] == ["psf__requests-1142", "psf__requests-2317"]
    assert result.notes == (
        "excluded acme__widget-1: no environment spec for acme/widget 2.3 (add one in a TOML "
        "file named by TOOLPOLICY_ENV_SPECS)",
        f"excluded pallets__flask-5014: no mirror of pallets/flask at {mirrors}/pallets__flask",
    )


def test_a_users_spec_makes_a_repo_eligible(
    rows: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    specs = tmp_path / "specs.toml"
    specs.write_text('[repo."acme/widget"]\npython = ""\n', encoding="utf-8")
    monkeypatch.setenv(SPECS_ENV, str(specs))
    result = load_instances(rows, exclude=runnable_here(None))
    assert "acme__widget-1" in [i.instance_id for i in result.instances]
    assert result.notes == ()


def test_the_sample_is_drawn_from_eligible_instances_only(
    rows: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(SPECS_ENV, raising=False)
    mirrors = tmp_path / "mirrors"
    (mirrors / "psf__requests").mkdir(parents=True)
    for seed in range(5):
        result = load_instances(rows, sample=1, seed=seed, exclude=runnable_here(mirrors))
        assert [i.repo for i in result.instances] == ["psf/requests"]


def test_bundled_instances_are_always_eligible(tmp_path: Path) -> None:
    result = load_instances("bundled", exclude=runnable_here(tmp_path / "no-mirrors"))
    assert len(result.instances) == 25 and result.notes == ()


def test_a_row_mined_from_history_needs_no_spec_of_its_version(
    rows: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(SPECS_ENV, raising=False)
    lines = Path(rows).read_text(encoding="utf-8").splitlines()
    mined = json.loads(lines[-1]) | {"instance_id": "acme__widget-2", "mined_from": "ab" * 20}
    Path(rows).write_text("\n".join([*lines, json.dumps(mined)]) + "\n", encoding="utf-8")
    result = load_instances(rows, exclude=runnable_here(None))
    names = [i.instance_id for i in result.instances]
    assert "acme__widget-2" in names and "acme__widget-1" not in names
    assert result.notes[0].startswith("excluded acme__widget-1: no environment spec")
