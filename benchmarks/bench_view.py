"""The viewer on a real report: how long its site takes to build, how large it is, and how soon
a browser shows the index and the largest instance page.

Builds the site of REPORT (default: the report ``make eval`` writes) into a temporary
directory, then opens the pages in headless chromium (Debian's, as the tests use) and reads the
browser's own first-contentful-paint and load times. Also builds once with the trajectory file
grown to GROW copies of itself (``--grow``), to show build time and peak memory following the
file's size. Prints figures; asserts nothing.

    python benchmarks/bench_view.py [REPORT] [--grow N]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pytest_toolpolicy.view import build_site

DEFAULT = Path("reports/sim-bundled-seed0")


def paint_times(url: str) -> tuple[float, float]:
    """(first contentful paint, load event) in ms, as the browser measured them."""
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
        page = browser.new_page()
        page.goto(url, wait_until="load")
        page.wait_for_function("performance.getEntriesByName('first-contentful-paint').length > 0")
        fcp = page.evaluate("performance.getEntriesByName('first-contentful-paint')[0].startTime")
        load = page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd")
        browser.close()
    return float(fcp), float(load)


def grown_build(report: Path, copies: int) -> None:
    """The site of a report whose trajectory file is ``copies`` times as large (the same items
    repeated: the index keeps the last of each), in a child process so its peak memory is its own."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "report"
        shutil.copytree(report, copy, ignore=shutil.ignore_patterns("view", "memo.sqlite*"))
        data = (report / "trajectories.jsonl").read_bytes()
        with (copy / "trajectories.jsonl").open("wb") as handle:
            for _ in range(copies):
                handle.write(data)
        size = (copy / "trajectories.jsonl").stat().st_size
        code = (
            "import resource,sys,time; from pathlib import Path;"
            "from pytest_toolpolicy.view import build_site;"
            "s=build_site(Path(sys.argv[1]));"
            "print(round(s.seconds,1), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)"
        )
        out = subprocess.run(
            [sys.executable, "-c", code, str(copy)], capture_output=True, text=True, check=True
        )
        seconds, peak = out.stdout.split()
        print(f"trajectories {size / 1e6:.0f} MB: build {seconds} s, peak memory {peak} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument(
        "--grow", type=int, default=0, help="also build with the file N times as large"
    )
    ns = parser.parse_args()
    size = (ns.report / "trajectories.jsonl").stat().st_size
    with tempfile.TemporaryDirectory() as tmp:
        start = time.monotonic()
        site = build_site(ns.report, Path(tmp) / "view")
        wall = time.monotonic() - start
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        pages = sorted((Path(tmp) / "view" / "i").iterdir(), key=lambda p: p.stat().st_size)
        print(f"report {ns.report}: trajectories {size / 1e6:.1f} MB")
        print(
            f"site: {site.pages} files, {site.bytes / 1e6:.1f} MB, built in {wall:.1f} s"
            f" (peak memory of this process {peak} MiB)"
        )
        print(f"largest instance page: {pages[-1].name}, {pages[-1].stat().st_size / 1e6:.2f} MB")
        for name, path in (("index", site.index), ("largest instance page", pages[-1])):
            fcp, load = paint_times(path.as_uri())
            print(f"{name}: first contentful paint {fcp:.0f} ms, load {load:.0f} ms")
    if ns.grow:
        grown_build(ns.report, ns.grow)


if __name__ == "__main__":
    main()
