"""``toolpolicy envs build`` and ``envs list`` given malformed input: a dataset's torn and
wrong-shaped records skipped and said in one line, a spec file that cannot be read refused in
one line, a torn environment record passed over and said."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_toolpolicy.cli import main
from pytest_toolpolicy.envs.cache import envs_root
from pytest_toolpolicy.envs.spec import SPECS_ENV

from ..malformed import one_line, write_malformed

SAMPLE = Path(__file__).parents[1] / "data" / "swebench" / "verified_full_sample.jsonl"


@pytest.fixture(autouse=True)
def no_user_specs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SPECS_ENV, raising=False)


def test_build_skips_malformed_records_and_says_so_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flask, requests, other = (json.loads(line) for line in SAMPLE.read_text().splitlines())
    data = tmp_path / "rows.jsonl"
    torn = write_malformed(data, [flask, other], {**requests, "FAIL_TO_PASS": 5})
    mirrors = tmp_path / "mirrors"
    mirrors.mkdir()
    argv = ["envs", "build", "--dataset", str(data), "--repos", str(mirrors)]
    assert main(argv) == 1  # a broken dataset row counts as a failure, as before
    captured = capsys.readouterr()
    assert one_line(captured.err) == (
        f"toolpolicy envs build: {data}:2: instance psf__requests-1142: field FAIL_TO_PASS:"
        " not a list of test ids (5) (2 malformed records skipped)"
    )
    assert f"<line {torn} of {data}>" in captured.out  # every skipped record listed there
    for good in (flask, other):  # read, and left out only for want of a mirror here
        assert f"excluded {good['instance_id']}: no mirror of" in captured.out


def test_build_refuses_a_spec_file_it_cannot_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    specs = tmp_path / "specs.toml"
    specs.write_text('[repo."acme/calc"]\npython = "3.11"\n[[repo."acme/calc".spec]]\nversions = [')
    monkeypatch.setenv(SPECS_ENV, str(specs))
    assert main(["envs", "build", "--dataset", str(SAMPLE)]) == 2
    assert one_line(capsys.readouterr().err).startswith(
        f"toolpolicy envs build: {specs}:4: not TOML: "
    )
    specs.write_text('[repo."acme/calc"]\npython = 3.11\n')  # TOML, of the wrong shape
    assert main(["envs", "build", "--dataset", str(SAMPLE)]) == 2
    assert one_line(capsys.readouterr().err) == (
        f'toolpolicy envs build: {specs}: repo."acme/calc".python: expected a string, got float'
    )


def test_list_passes_over_a_torn_record_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    root = envs_root()
    root.mkdir(parents=True)
    (root / "o__a-1.0-abc.json").write_text('{"repo": "o/a", "python_version": "3.11"}')
    (root / "o__b-1.0-def.json").write_text('{"repo": "o/b", "pyth')  # a write cut short
    assert main(["envs", "list"]) == 0
    captured = capsys.readouterr()
    assert "1 environment(s) in" in captured.out and "o__a-1.0-abc  python 3.11" in captured.out
    assert one_line(captured.err) == (
        f"toolpolicy envs list: {root / 'o__b-1.0-def.json'}: not a readable JSON object"
        " (1 record(s) skipped)"
    )
