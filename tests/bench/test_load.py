from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from pytest_toolpolicy.bench import DatasetError, DatasetUnavailable, load_instances
from pytest_toolpolicy.bench import load as load_module

SWEBENCH = Path(__file__).resolve().parents[3] / "shared" / "swebench"
FULL = SWEBENCH / "verified_full_sample.jsonl"
STATEMENTS = SWEBENCH / "verified_statements_patches.jsonl"
FULL_IDS = ("pallets__flask-5014", "psf__requests-1142", "psf__requests-2317")


@pytest.fixture(autouse=True)
def shared_data() -> None:
    if not (FULL.is_file() and STATEMENTS.is_file()):
        pytest.skip(
            f"shared SWE-bench data not found in {SWEBENCH} (the checkout sits beside shared/)"
        )


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def test_the_real_full_sample_loads_every_row(cache: Path) -> None:
    result = load_instances(str(FULL))
    assert result.errors == ()
    assert tuple(i.instance_id for i in result.instances) == FULL_IDS
    flask = result.instances[0]
    assert flask.FAIL_TO_PASS == ("tests/test_blueprints.py::test_empty_name_not_allowed",)
    assert flask.source == str(FULL) and flask.repo == "pallets/flask"
    assert (cache / "datasets").is_dir()


def test_statements_only_data_loads_without_tests_and_fails_with_them() -> None:
    loose = load_instances(str(STATEMENTS), require_tests=False)
    assert (len(loose.instances), loose.errors) == (500, ())
    assert all(i.FAIL_TO_PASS == () and i.test_patch == "" for i in loose.instances)
    strict = load_instances(str(STATEMENTS))
    assert (len(strict.instances), len(strict.errors)) == (0, 500)
    assert {e.field for e in strict.errors} == {"FAIL_TO_PASS"}
    assert str(strict.errors[0]).startswith(f"instance {loose.instances[0].instance_id}: field")


def test_json_and_parquet_copies_load_identically(tmp_path: Path) -> None:
    rows = read_rows(FULL)
    decoded = [
        {
            **r,
            "FAIL_TO_PASS": json.loads(r["FAIL_TO_PASS"]),
            "PASS_TO_PASS": json.loads(r["PASS_TO_PASS"]),
        }
        for r in rows
    ]
    (tmp_path / "rows.json").write_text(json.dumps(decoded), encoding="utf-8")
    pd.DataFrame(rows).to_parquet(tmp_path / "rows.parquet")
    expected = load_instances(str(FULL)).instances
    for name in ("rows.json", "rows.parquet"):
        result = load_instances(str(tmp_path / name))
        assert result.errors == ()
        source = str(tmp_path / name)
        assert [i.source for i in result.instances] == [source] * 3
        assert [_without_source(i) for i in result.instances] == [
            _without_source(i) for i in expected
        ]


def _without_source(instance: Any) -> dict[str, Any]:
    return {k: v for k, v in vars(instance).items() if k != "source"}


def test_broken_rows_are_errors_and_the_others_still_load(tmp_path: Path) -> None:
    rows = read_rows(FULL)
    del rows[0]["base_commit"]
    rows[1]["FAIL_TO_PASS"] = "[oops"
    result = load_instances(write_jsonl(tmp_path / "broken.jsonl", rows))
    assert [i.instance_id for i in result.instances] == ["psf__requests-2317"]
    assert [str(e) for e in result.errors] == [
        "instance pallets__flask-5014: field base_commit: missing",
        "instance psf__requests-1142: field FAIL_TO_PASS: not a JSON list of test ids ('[oops')",
    ]


def test_a_seeded_sample_is_stable_sorted_and_depends_on_the_seed() -> None:
    first = load_instances(str(STATEMENTS), sample=5, seed=1, require_tests=False)
    again = load_instances(str(STATEMENTS), sample=5, seed=1, require_tests=False)
    other = load_instances(str(STATEMENTS), sample=5, seed=2, require_tests=False)
    ids = [i.instance_id for i in first.instances]
    assert len(ids) == 5 and ids == sorted(ids)
    assert ids == [i.instance_id for i in again.instances]
    assert ids != [i.instance_id for i in other.instances]


def test_a_sample_larger_than_the_data_takes_all_with_a_note() -> None:
    result = load_instances(str(FULL), sample=10)
    assert len(result.instances) == 3
    assert result.notes == ("sample of 10 asked, 3 available: using all",)
    with pytest.raises(ValueError, match="positive"):
        load_instances(str(FULL), sample=0)


def test_ids_select_instances_and_unknown_ids_are_errors() -> None:
    result = load_instances(
        str(FULL), ids=["psf__requests-2317", "nope__nope-1", "pallets__flask-5014"]
    )
    assert [i.instance_id for i in result.instances] == [
        "pallets__flask-5014",
        "psf__requests-2317",
    ]
    assert [(e.instance_id, e.field) for e in result.errors] == [("nope__nope-1", "instance_id")]


def make_instance(root: Path, name: str, **changes: Any) -> Path:
    directory = root / name
    (directory / "repo").mkdir(parents=True)
    (directory / "repo" / "shop.py").write_text("X = 1\n", encoding="utf-8")
    spec = {
        "instance_id": name,
        "repo": "bundled/shop",
        "base_commit": "0123456789abcdef0123456789abcdef01234567",
        "problem_statement": "X is wrong",
        "patch": "diff --git a/shop.py b/shop.py\n",
        "test_patch": "diff --git a/test_shop.py b/test_shop.py\n",
        "FAIL_TO_PASS": ["test_shop.py::test_x"],
        "PASS_TO_PASS": [],
        "version": "0.1",
        **changes,
    }
    (directory / "instance.json").write_text(json.dumps(spec), encoding="utf-8")
    return directory


def test_a_bundled_dir_reports_broken_instances_and_loads_the_rest(tmp_path: Path) -> None:
    good = make_instance(tmp_path, "bundled__shop-1")
    make_instance(tmp_path, "bundled__shop-2", underspecified=True, patch="")
    (tmp_path / "bundled__shop-3").mkdir()
    (tmp_path / "bundled__shop-3" / "instance.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "FORMAT.md").write_text("docs\n", encoding="utf-8")
    result = load_instances(f"bundled:{tmp_path}")
    assert [i.instance_id for i in result.instances] == ["bundled__shop-1", "bundled__shop-2"]
    assert result.instances[0].path == good and result.instances[0].source == "bundled"
    assert result.instances[1].underspecified
    [error] = result.errors
    assert (error.instance_id, error.field) == ("bundled__shop-3", "instance.json")
    assert "bundled__shop-3" in str(error) and "unreadable JSON" in str(error)


def test_incomplete_bundled_dirs_are_errors(tmp_path: Path) -> None:
    (tmp_path / "bundled__a-1").mkdir()
    make_instance(tmp_path, "bundled__b-1", instance_id="bundled__other-1")
    (make_instance(tmp_path, "bundled__c-1") / "repo" / "shop.py").unlink()
    (tmp_path / "bundled__c-1" / "repo").rmdir()
    result = load_instances(f"bundled:{tmp_path}")
    assert result.instances == ()
    assert [(e.instance_id, e.field) for e in result.errors] == [
        ("bundled__a-1", "instance.json"),
        ("bundled__b-1", "instance_id"),
        ("bundled__c-1", "repo/"),
    ]


def test_the_default_bundled_dir_is_the_projects_own() -> None:
    project = Path(__file__).resolve().parents[2]
    assert load_module.BUNDLED_DIR.resolve() == project / "evals" / "instances"
    result = load_instances("bundled")  # instances are being written: only check it never crashes
    assert all(i.path is not None and i.source == "bundled" for i in result.instances)


def test_hub_connection_failure_is_dataset_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    import datasets

    calls: list[tuple[str, str]] = []

    def offline(dataset_id: str, split: str, cache_dir: str) -> None:
        calls.append((dataset_id, split))
        raise ConnectionError("Couldn't reach 'princeton-nlp/SWE-bench_Verified' on the Hub")

    monkeypatch.setattr(datasets, "load_dataset", offline)
    with pytest.raises(DatasetUnavailable, match="princeton-nlp/SWE-bench_Verified.*bundled"):
        load_instances("princeton-nlp/SWE-bench_Verified")
    with pytest.raises(DatasetUnavailable):
        load_instances("princeton-nlp/SWE-bench_Lite:dev")
    assert calls == [
        ("princeton-nlp/SWE-bench_Verified", "test"),
        ("princeton-nlp/SWE-bench_Lite", "dev"),
    ]


@pytest.mark.parametrize("source", ["nowhere.jsonl", "not a source", "bundled:/no/such/dir"])
def test_unreadable_sources_are_dataset_errors(source: str) -> None:
    with pytest.raises(DatasetError):
        load_instances(source)


def test_a_file_datasets_cannot_parse_is_a_dataset_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"instance_id": "a"}\n{oops\n', encoding="utf-8")
    with pytest.raises(DatasetError, match="cannot read"):
        load_instances(str(path))
