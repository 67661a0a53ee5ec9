from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from pytest_toolpolicy.bench import DatasetError, DatasetUnavailable, load_instances
from pytest_toolpolicy.bench import load as load_module
from pytest_toolpolicy.bench.bundled_repos import build

# Real SWE-bench Verified rows, committed (tests/data/swebench/README.md): the 3 complete rows
# and 12 of the 500 statements-only rows.
DATA = Path(__file__).resolve().parents[1] / "data" / "swebench"
FULL = DATA / "verified_full_sample.jsonl"
STATEMENTS = DATA / "verified_statements_sample.jsonl"
STATEMENT_ROWS = 12
FULL_IDS = ("pallets__flask-5014", "psf__requests-1142", "psf__requests-2317")
# The shared data directory the rows were copied from, beside the checkout (optional).
SHARED = Path(__file__).resolve().parents[3] / "shared" / "swebench"


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
    assert (len(loose.instances), loose.errors) == (STATEMENT_ROWS, ())
    assert all(i.FAIL_TO_PASS == () and i.test_patch == "" for i in loose.instances)
    strict = load_instances(str(STATEMENTS))
    assert (len(strict.instances), len(strict.errors)) == (0, STATEMENT_ROWS)
    assert {e.field for e in strict.errors} == {"FAIL_TO_PASS"}
    assert str(strict.errors[0]).startswith(f"instance {loose.instances[0].instance_id}: field")


def test_the_committed_rows_are_the_shared_files_rows() -> None:
    """Opt-in: where the shared data directory sits beside the checkout, the committed lines are
    lines of the real files, and the whole real statements file (500 rows) loads."""
    full, statements = SHARED / FULL.name, SHARED / "verified_statements_patches.jsonl"
    if not (full.is_file() and statements.is_file()):
        pytest.skip(f"shared SWE-bench data not found in {SHARED} (the checkout sits beside it)")
    assert FULL.read_bytes() == full.read_bytes()
    real = statements.read_text(encoding="utf-8").splitlines()
    assert set(STATEMENTS.read_text(encoding="utf-8").splitlines()) <= set(real)
    loose = load_instances(str(statements), require_tests=False)
    assert (len(loose.instances), loose.errors) == (500, ())
    strict = load_instances(str(statements))
    assert (len(strict.instances), len(strict.errors)) == (0, 500)
    assert {e.field for e in strict.errors} == {"FAIL_TO_PASS"}


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


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".parquet"])
def test_rows_whose_names_or_paths_cannot_be_used_are_errors_naming_them(
    tmp_path: Path, suffix: str
) -> None:
    """An absolute path in test_patch, a 300-character id, a repository that climbs out of the
    mirror directory: each an error naming the instance and the field when the row is loaded
    (not a git or OSError failure at grading), and the other rows still load."""
    flask, requests, other = read_rows(FULL)
    flask["test_patch"] = flask["test_patch"].replace(" a/", " a//etc/").replace(" b/", " b//etc/")
    requests["instance_id"] = "psf__requests-" + "1" * 286
    long_id = requests["instance_id"]
    rows = [flask, requests, {**other, "repo": "psf/.."}, {**other, "instance_id": "ok-1"}]
    path = tmp_path / f"rows{suffix}"
    if suffix == ".jsonl":
        write_jsonl(path, rows)
    elif suffix == ".json":
        path.write_text(json.dumps(rows), encoding="utf-8")
    else:
        pd.DataFrame(rows).to_parquet(path)
    result = load_instances(str(path))
    assert [i.instance_id for i in result.instances] == ["ok-1"]
    first, second, third = result.errors
    assert str(first) == (
        "instance pallets__flask-5014: field test_patch: line 1 names"
        " '/etc/tests/test_blueprints.py', which is absolute"
    )
    row_label = "line 2" if suffix == ".jsonl" else "row 2"
    assert (second.instance_id, second.field) == (f"<{row_label} of {path}>", "instance_id")
    assert second.message.startswith("too long: 300 bytes, at most 128")
    assert long_id not in str(second)  # named by its row, the id shown cut
    assert str(third) == (
        "instance psf__requests-2317: field repo: its name '..' is not a directory name ('psf/..')"
    )


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
    assert result.notes == (
        "sample of 10 asked, 3 available: using all",
        "sample: 2 repositories: pallets/flask 1, psf/requests 2",
    )
    drawn = load_instances(str(FULL), sample=2, seed=0)
    assert [i.repo for i in drawn.instances].count("pallets/flask") == 1  # one share each
    assert drawn.notes == (
        "sample of 2 of 3, seed 0, stratified by repository",
        "sample: 2 repositories: pallets/flask 1, psf/requests 1",
    )
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
    """An instance of ``bundled/shop``, its base a commit of ``root/../repos/shop.fi``."""
    directory = root / name
    (directory / "repo").mkdir(parents=True)
    (directory / "repo" / "shop.py").write_text(f"X = 1  # {name}\n", encoding="utf-8")
    spec = {
        "instance_id": name,
        "repo": "bundled/shop",
        "base_commit": "0" * 40,  # set by build
        "problem_statement": "X is wrong",
        "patch": "diff --git a/shop.py b/shop.py\n",
        "test_patch": "diff --git a/test_shop.py b/test_shop.py\n",
        "FAIL_TO_PASS": ["test_shop.py::test_x"],
        "PASS_TO_PASS": [],
        "version": "0.1",
        **changes,
    }
    (directory / "instance.json").write_text(json.dumps(spec), encoding="utf-8")
    build(root)
    shutil.rmtree(directory / "repo")
    return directory


def test_a_bundled_dir_reports_broken_instances_and_loads_the_rest(tmp_path: Path) -> None:
    root = tmp_path / "instances"
    good = make_instance(root, "bundled__shop-1")
    make_instance(root, "bundled__shop-2", underspecified=True, patch="")
    (root / "bundled__shop-3").mkdir()
    (root / "bundled__shop-3" / "instance.json").write_text("{not json", encoding="utf-8")
    (root / "FORMAT.md").write_text("docs\n", encoding="utf-8")
    result = load_instances(f"bundled:{root}")
    assert [i.instance_id for i in result.instances] == ["bundled__shop-1", "bundled__shop-2"]
    assert result.instances[0].path == good and result.instances[0].source == "bundled"
    assert result.instances[1].underspecified
    [error] = result.errors
    assert (error.instance_id, error.field) == ("bundled__shop-3", "instance.json")
    assert "bundled__shop-3" in str(error) and "unreadable JSON" in str(error)


def test_incomplete_bundled_dirs_are_errors(tmp_path: Path) -> None:
    root = tmp_path / "instances"
    (root / "bundled__a-1").mkdir(parents=True)
    make_instance(root, "bundled__b-1", instance_id="bundled__other-1")
    gone, ghost = (make_instance(root, f"bundled__{n}-1") / "instance.json" for n in "cd")
    gone.write_text(gone.read_text().replace('"bundled/shop"', '"bundled/gone"'))
    ghost.write_text(re.sub(r'"base_commit": "\w+"', '"base_commit": "1234567"', ghost.read_text()))
    result = load_instances(f"bundled:{root}")
    assert result.instances == ()
    assert [(e.instance_id, e.field) for e in result.errors] == [
        ("bundled__a-1", "instance.json"),
        ("bundled__b-1", "instance_id"),
        ("bundled__c-1", "repo"),
        ("bundled__d-1", "base_commit"),
    ]
    messages = [str(e) for e in result.errors[2:]]
    assert f"no repository stream {tmp_path}/repos/gone.fi for bundled/gone" in messages[0]
    assert f"1234567 is not a commit of {tmp_path}/repos/shop.fi" in messages[1]


def test_a_corrupt_stream_is_an_error_for_each_of_its_instances(tmp_path: Path) -> None:
    root = tmp_path / "instances"
    make_instance(root, "bundled__shop-1")
    make_instance(root, "bundled__shop-2")
    (tmp_path / "repos" / "shop.fi").write_bytes(b"blob\nmark :1\ndata lots\n")
    result = load_instances(f"bundled:{root}")
    assert result.instances == ()
    assert [(e.instance_id, e.field) for e in result.errors] == [
        ("bundled__shop-1", "repo"),
        ("bundled__shop-2", "repo"),
    ]
    assert "shop.fi: not a git fast-export stream" in str(result.errors[0])


def test_the_default_bundled_dir_is_package_data() -> None:
    package = Path(load_module.__file__).resolve().parent
    assert package / "bundled" / "instances" == load_module.BUNDLED_DIR
    result = load_instances("bundled")
    assert len(result.instances) == 25 and not result.errors
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


def test_a_bad_line_is_an_error_naming_line_and_file_and_the_rest_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import datasets

    handed: list[str] = []
    real = datasets.load_dataset

    def spy(builder: str, data_files: str, **kwargs: Any) -> Any:
        handed.append(Path(data_files).read_text(encoding="utf-8"))
        return real(builder, data_files=data_files, **kwargs)

    monkeypatch.setattr(datasets, "load_dataset", spy)
    flask, requests, other = read_rows(FULL)
    path = tmp_path / "mixed.jsonl"
    lines = [
        json.dumps(flask).encode(),
        b'{"instance_id": "psf__requests-1142", "repo": oops',
        b"",
        b'["an", "array"]',
        b'"a string"',
        json.dumps(other).encode(),
        b'{"note": "caf\xe9"}',  # latin-1
        b'{"problem_statement": "lone \\ud800 escape"}',
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    result = load_instances(str(path))
    assert [i.instance_id for i in result.instances] == ["pallets__flask-5014", FULL_IDS[2]]
    assert [str(e) for e in result.errors] == [
        f"instance psf__requests-1142: field row: line 2 of {path}: not valid JSON"
        " (Expecting value at column 47)",
        f"instance <line 4 of {path}>: field row: not a JSON object but an array",
        f"instance <line 5 of {path}>: field row: not a JSON object but a string",
        f"instance <line 7 of {path}>: field row: not UTF-8 text (byte 14)",
        f"instance <line 8 of {path}>: field problem_statement: a lone surrogate escape:"
        " not valid Unicode text",
    ]
    # datasets still reads the rows, from a copy holding only the good lines.
    assert [json.loads(line) for line in handed[0].splitlines()] == [flask, other]
    # --ids finds the instance whose line is broken by the id the line still shows.
    only = load_instances(str(path), ids=["psf__requests-1142"])
    assert only.instances == () and [e.field for e in only.errors] == ["row"]
    assert "line 2 of" in str(only.errors[0])


def test_rows_of_a_jsonl_file_are_named_by_line(tmp_path: Path) -> None:
    rows = read_rows(FULL)
    del rows[1]["repo"]
    rows[0]["problem_statement"] += " \u2028 a line separator inside a string"
    path = tmp_path / "named.jsonl"
    text = json.dumps(rows[0], ensure_ascii=False) + "\n\n" + json.dumps(rows[1]) + "\n{bad\n"
    path.write_text(text, encoding="utf-8")
    result = load_instances(str(path))
    assert [str(e) for e in result.errors] == [
        "instance psf__requests-1142: field repo: missing",
        f"instance <line 4 of {path}>: field row: not valid JSON"
        " (Expecting property name enclosed in double quotes at column 2)",
    ]
    assert "\u2028" in result.instances[0].problem_statement
    row = {k: v for k, v in rows[2].items() if k != "instance_id"}
    path.write_text("\n" + json.dumps(row) + "\n", encoding="utf-8")
    (error,) = load_instances(str(path)).errors
    assert str(error) == f"instance <line 2 of {path}>: field instance_id: missing"


def test_a_bom_and_crlf_line_ends_are_read(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    lines = [json.dumps(r) for r in read_rows(FULL)]
    path.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines).encode() + b"\r\n")
    result = load_instances(str(path))
    assert result.errors == () and len(result.instances) == 3


def test_the_cleaned_copy_is_made_once_per_file_content(tmp_path: Path, cache: Path) -> None:
    path = tmp_path / "again.jsonl"
    path.write_text(json.dumps(read_rows(FULL)[0]) + "\n{oops\n", encoding="utf-8")
    first = load_instances(str(path))
    copies = list((cache / "datasets" / "cleaned").iterdir())
    stamp = copies[0].stat().st_mtime_ns
    again = load_instances(str(path))
    assert again.instances == first.instances and len(first.instances) == 1
    assert [str(e) for e in again.errors] == [str(e) for e in first.errors]
    assert list((cache / "datasets" / "cleaned").iterdir()) == copies
    assert copies[0].stat().st_mtime_ns == stamp


@pytest.mark.parametrize("text", ["", "\n  \n\n"])
def test_an_empty_jsonl_file_is_a_dataset_error_naming_it(tmp_path: Path, text: str) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DatasetError, match=f"^dataset file {path} is empty$"):
        load_instances(str(path))


def test_a_wholly_bad_jsonl_file_is_a_dataset_error_naming_it_and_its_lines(
    tmp_path: Path,
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text("{oops\n[1]\n\n42\nnull\n", encoding="utf-8")
    with pytest.raises(DatasetError) as caught:
        load_instances(str(path))
    message = str(caught.value)
    assert message.startswith(f"dataset file {path} has no readable row (4 bad): ")
    assert f"<line 1 of {path}>" in message and f"<line 4 of {path}>" in message
    assert message.endswith("; ...")


def test_a_lone_surrogate_in_a_bundled_instance_is_an_error(tmp_path: Path) -> None:
    root = tmp_path / "instances"
    make_instance(root, "bundled__shop-1", problem_statement="X is \ud800 wrong")
    make_instance(root, "bundled__shop-2", FAIL_TO_PASS=["test_shop.py::test_\udc80"])
    make_instance(root, "bundled__shop-3")
    result = load_instances(f"bundled:{root}")
    assert [i.instance_id for i in result.instances] == ["bundled__shop-3"]
    assert [str(e) for e in result.errors] == [
        "instance bundled__shop-1: field problem_statement: not valid Unicode text"
        " (a lone surrogate)",
        "instance bundled__shop-2: field FAIL_TO_PASS: not a list of test ids"
        " (['test_shop.py::test_\\udc80'])",
    ]
