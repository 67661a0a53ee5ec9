"""``toolpolicy view``: builds the site, serves it on the loopback only, and names what is wrong."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from ..malformed import one_line, write_malformed
from ..view.made import sim_report

TOOLPOLICY = [sys.executable, "-m", "pytest_toolpolicy.cli"]


@pytest.fixture(scope="session")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sim_report(tmp_path_factory)


def test_it_builds_the_site_and_prints_its_index(report: Path, tmp_path: Path) -> None:
    done = subprocess.run([*TOOLPOLICY, "view", str(report), "--out", str(tmp_path / "site")],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{tmp_path / 'site' / 'index.html'} (")
    assert (tmp_path / "site" / "items.html").is_file()


def test_a_directory_that_is_no_report_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [*TOOLPOLICY, "view", str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert f"toolpolicy view: {tmp_path} holds no results.parquet" in done.stderr


def test_malformed_lines_are_skipped_and_said_once_per_file(report: Path, tmp_path: Path) -> None:
    copy = tmp_path / "report"
    shutil.copytree(report, copy, ignore=shutil.ignore_patterns("view", "items", "*.sqlite"))
    trajectories = copy / "trajectories.jsonl"
    good = [json.loads(line) for line in trajectories.read_text().splitlines()]
    wrong = {**good[1], "turns": [{**good[1]["turns"][0], "index": "first"}]}
    torn = write_malformed(trajectories, [good[0], *good[2:]], wrong)
    instances = copy / "instances.jsonl"
    rows = [json.loads(line) for line in instances.read_text().splitlines()]
    write_malformed(instances, rows, {**rows[0], "FAIL_TO_PASS": "test_x"})
    site = tmp_path / "site"
    done = subprocess.run([*TOOLPOLICY, "view", str(copy), "--out", str(site)],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.splitlines() == [
        f"toolpolicy view: {trajectories}:2: turns[0].index is not a whole number but a string"
        f" (2 malformed lines skipped: 2, {torn})",
        f"toolpolicy view: {instances}:2: FAIL_TO_PASS is not a list of test ids"
        f" (2 malformed lines skipped: 2, {len(rows) + 2})",
    ]
    # the good trajectories are on their items' pages; only the skipped one's item has none
    pages = [page.read_text() for page in (site / "i").glob("*.html")]
    assert sum(page.count("no trajectory was recorded") for page in pages) == 1
    assert sum(page.count("<h4>turn 0</h4>") for page in pages) == len(good) - 1


def test_a_torn_results_table_is_one_line_and_exit_two(report: Path, tmp_path: Path) -> None:
    copy = tmp_path / "report"
    shutil.copytree(report, copy, ignore=shutil.ignore_patterns("view", "items", "*.sqlite"))
    table = copy / "results.parquet"
    table.write_bytes(table.read_bytes()[:-100])
    done = subprocess.run([*TOOLPOLICY, "view", str(copy)], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 2
    assert one_line(done.stderr) == (
        f"toolpolicy view: {table}: not a readable Parquet table: Parquet magic bytes not found"
        " in footer. Either the file is corrupted or this is not a parquet file."
    )


def test_serve_answers_on_the_loopback_with_pages_and_no_listings(
    report: Path, tmp_path: Path
) -> None:
    server = subprocess.Popen(
        [
            *TOOLPOLICY,
            "view",
            str(report),
            "--out",
            str(tmp_path / "site"),
            "--serve",
            "--port",
            "0",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        server.stdout.readline()  # the index's path
        line = server.stdout.readline()
        assert line.startswith("serving http://127.0.0.1:"), line
        url = line.split()[1]
        with urllib.request.urlopen(url, timeout=10) as answer:
            assert answer.status == 200 and b"decision table" in answer.read()
        with pytest.raises(urllib.error.HTTPError) as listing:
            urllib.request.urlopen(url.rsplit("/", 1)[0] + "/i/", timeout=10)
        assert listing.value.code == 404
    finally:
        server.terminate()
        server.wait(timeout=10)
