"""``--toolpolicy-since``: only instances created on or after a date, before the sample is
drawn; those without ``created_at`` are left out and counted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_toolpolicy.bench import load_instances
from pytest_toolpolicy.bench.since import parse_since
from pytest_toolpolicy.session.settings import SettingsError, settings_from

from .test_load import FULL, read_rows, write_jsonl


def test_dates_and_timestamps_read_as_utc() -> None:
    assert parse_since("2014-01-01").when.isoformat() == "2014-01-01T00:00:00"
    assert parse_since("2014-01-01T02:00:00+02:00").when.isoformat() == "2014-01-01T00:00:00"
    with pytest.raises(ValueError, match="not a date: 'last year'"):
        parse_since("last year")


def test_older_and_undated_instances_are_left_out_before_the_sample(
    tmp_path: Path, cache: Path
) -> None:
    rows = read_rows(FULL)  # flask 2023-03-04, requests 2013-01-25 and 2014-11-01
    undated = rows[2] | {"instance_id": "psf__requests-9999"}
    del undated["created_at"]
    path = write_jsonl(tmp_path / "rows.jsonl", [*rows, undated])
    result = load_instances(path, since=parse_since("2014-11-01T02:20:16Z"))
    assert [i.instance_id for i in result.instances] == [
        "pallets__flask-5014",
        "psf__requests-2317",
    ]  # fmt: skip  (on the date itself is kept)
    assert result.notes == (
        "since 2014-11-01T02:20:16Z: 2 of 4 instances created on or after it "
        "(1 older, 1 without created_at left out)",
    )
    sampled = load_instances(path, since=parse_since("2014-01-01"), sample=1, seed=0)
    assert len(sampled.instances) == 1
    assert sampled.instances[0].instance_id in {"pallets__flask-5014", "psf__requests-2317"}


def test_a_bad_date_is_a_usage_error_and_the_report_is_named_by_it() -> None:
    def get(given: dict[str, str]):  # type: ignore[no-untyped-def]
        return lambda name: given.get(name)

    with pytest.raises(SettingsError, match="--toolpolicy-since: not a date: 'soon'"):
        settings_from(get({"toolpolicy": "ab", "toolpolicy_since": "soon"}), env={})
    settings = settings_from(get({"toolpolicy": "ab", "toolpolicy_since": "2025-01-01"}), env={})
    assert settings is not None and settings.report.name == "sim-bundled-seed0-since2025-01-01"


def test_the_option_selects_what_is_collected(pytester: pytest.Pytester) -> None:
    rows = [json.dumps(r) for r in read_rows(FULL)]
    dataset = pytester.path / "rows.jsonl"
    dataset.write_text("\n".join(rows) + "\n")
    result = pytester.runpytest_subprocess(
        "--toolpolicy=ab", f"--toolpolicy-dataset={dataset}", "--toolpolicy-since=2014-06-01",
        "--collect-only", "-q",
    )  # fmt: skip
    items = sorted(line for line in result.stdout.lines if "test_instance[" in line)
    assert [i.split("[", 1)[1] for i in items] == [
        "pallets__flask-5014-current]", "pallets__flask-5014-policy]",
        "psf__requests-2317-current]", "psf__requests-2317-policy]",
    ]  # fmt: skip
