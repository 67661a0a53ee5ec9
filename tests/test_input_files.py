"""The shared readers: each good line's record and where its bytes are, each bad line named
with why (a torn last line said to be cut short), and the one-value files refused at their
line."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from pytest_toolpolicy.input_files import (
    InputError,
    RecordError,
    end_torn_line,
    read_jsonl,
    read_parquet,
    read_toml,
    scan_jsonl,
)


def as_object(value: object) -> dict:
    if not isinstance(value, dict):
        raise RecordError("not an object")
    return value


def test_good_lines_are_read_back_by_offset_and_bad_ones_named(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    deep = "[" * 100_000 + "]" * 100_000
    text = '{"a": "ü"}\n\n[1]\n\xff\n' + deep + '\n{"b": 2}\n{"c": 3, "d'
    path.write_bytes(text.encode("utf-8").replace("\xff".encode(), b"\xff"))
    entries = list(scan_jsonl(path, as_object))
    assert [(e.record, e.line) for e in entries] == [({"a": "ü"}, 1), ({"b": 2}, 6)]
    raw = path.read_bytes()
    assert all(json.loads(raw[e.offset : e.offset + e.length]) == e.record for e in entries)
    records, skipped = read_jsonl(path, as_object)
    assert records == [{"a": "ü"}, {"b": 2}]
    why = dict(skipped.lines)
    assert why[3] == "not an object" and why[4] == "not UTF-8 text (byte 1)"
    assert why[5].startswith("not readable JSON (RecursionError")
    assert why[7].startswith("cut short: not JSON: Unterminated string")  # the last, unended
    assert skipped.summary() == f"{path}:3: not an object (4 malformed lines skipped: 3, 4, 5, 7)"
    assert str(skipped.error()) == f"{path}:3: not an object"


def test_a_missing_file_has_no_lines(tmp_path: Path) -> None:
    records, skipped = read_jsonl(tmp_path / "none.jsonl", as_object)
    assert records == [] and not skipped and skipped.summary() == ""


def test_a_torn_last_line_is_ended_so_the_next_append_starts_its_own(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    assert end_torn_line(path) is None  # missing
    path.write_text('{"a": 1}\n')
    assert end_torn_line(path) is None and path.read_text() == '{"a": 1}\n'  # whole
    path.write_text('{"a": 1}\n{"b": ')
    assert end_torn_line(path) == 2
    with path.open("a") as handle:
        handle.write('{"c": 3}\n')
    records, skipped = read_jsonl(path, as_object)
    assert records == [{"a": 1}, {"c": 3}] and [n for n, _ in skipped.lines] == [2]


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("a = 1\n[b\nc = 2\n", "2: not TOML: Expected ']' at the end of a table declaration"),
        ("a = 1\nb = [", "2: not TOML: Invalid value"),  # at the end of the document
        ("a = 1\n\xff = 2\n", ": not UTF-8 text (byte 7)"),
    ],
)
def test_a_toml_file_is_refused_at_its_line(tmp_path: Path, text: str, error: str) -> None:
    path = tmp_path / "specs.toml"
    path.write_bytes(text.encode("utf-8").replace("\xff".encode(), b"\xff"))
    with pytest.raises(InputError) as refused:
        read_toml(path)
    assert str(refused.value) == f"{path}:{error}" if error[0].isdigit() else f"{path}{error}"


def test_a_parquet_table_cut_short_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "results.parquet"
    pd.DataFrame({"a": [1, 2]}).to_parquet(path)
    assert read_parquet(path)["a"].tolist() == [1, 2]
    path.write_bytes(path.read_bytes()[:-40])
    with pytest.raises(InputError, match=r"results\.parquet: not a readable Parquet table: "):
        read_parquet(path)
