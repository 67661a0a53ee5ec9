"""``toolpolicy view``: builds the site, serves it on the loopback only, and names what is wrong."""

from __future__ import annotations

import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from .made import sim_report

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
    assert f"toolpolicy: {tmp_path} holds no results.parquet" in done.stderr


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
