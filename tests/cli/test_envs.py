"""``toolpolicy envs build`` and ``envs list`` given malformed input: a dataset's torn and
wrong-shaped records skipped and said in one line, a spec file that cannot be read refused in
one line, a torn environment record passed over and said."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from pytest_toolpolicy.cli import main
from pytest_toolpolicy.envs.cache import envs_root
from pytest_toolpolicy.envs.spec import SPECS_ENV

from ..envs.test_cache import SPECS, instance, make_repo, package
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


@pytest.fixture
def shared_cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Mirrors under ``tmp_path``, ``envs/test_cache.py``'s specs, and no package index."""
    specs = tmp_path / "specs.toml"
    specs.write_text(SPECS, encoding="utf-8")
    monkeypatch.setenv(SPECS_ENV, str(specs))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    return tmp_path / "mirrors"


@pytest.mark.slow  # builds environments through the command: ~19 s
def test_envs_build_and_list_commands(
    offline: Path,
    tmp_path: Path,
    shared_cache: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (good,) = make_repo(offline / "acme__cli", {"calc.py": "x = 1\n"})
    (bad,) = make_repo(offline / "acme__clibad", package("clibad", fail="cannot build"))
    rows = [instance("acme/cli", good), instance("acme/clibad", bad)]
    rows.append(dataclasses.replace(rows[0], instance_id="acme__cli-2"))  # the same env
    data = tmp_path / "data.jsonl"
    fields = ["instance_id", "repo", "base_commit", "problem_statement", "patch", "test_patch"]
    fields += ["FAIL_TO_PASS", "PASS_TO_PASS", "version", "environment_setup_commit"]
    text = "".join(
        json.dumps({**{f: getattr(r, f) for f in fields}, "patch": "x", "test_patch": "x"}) + "\n"
        for r in rows
    )
    data.write_text(text)
    monkeypatch.setenv("TOOLPOLICY_CACHE_DIR", str(shared_cache))
    argv = ["envs", "build", "--dataset", str(data), "--repos", str(offline)]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "2 environment(s) for 3 instance(s)" in out
    assert re.search(r"^built +acme/cli 1\.0 @ \w{12} \(2 instance\(s\)\) [\d.]+s", out, re.M), out
    assert re.search(r"^failed +acme/clibad 1\.0 .*cannot build", out, re.M), out
    assert re.search(r"^\[1/2\] acme/cli 1\.0 @ \w{12} \(2 instance\(s\)\) \.\.\.$", out, re.M)
    table = out.split("\n\n")[-1].splitlines()
    assert table[0].split() == [
        "environment", "python", "instances", "status", "seconds", "MiB", "why",
    ]  # fmt: skip
    built = re.match(r"acme/cli 1\.0 @ \w{12} +- +2 +built +[\d.]+ +(\d+)$", table[1])
    assert built is not None and int(built[1]) > 1, table  # a venv is some MiB
    assert re.match(r"acme/clibad 1\.0 @ \w{12} +- +1 +failed +[\d.]+ +- +.*cannot build", table[2])
    assert table[3] == "2 environment(s): 1 built, 0 cached, 1 failed"
    assert main([*argv, "--ids", "acme__cli-1"]) == 0
    assert re.search(r"^cached +acme/cli ", capsys.readouterr().out, re.M)
    assert main(["envs", "list"]) == 0
    listing = capsys.readouterr().out
    assert re.search(r"^built +acme__cli-1\.0-\w+ +python 3\.\d+", listing, re.M), listing
    assert re.search(r"^failed +acme__clibad-1\.0-\w+ .*cannot build", listing, re.M), listing
