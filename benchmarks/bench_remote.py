"""The bundled A/B on one local worker against two execnet socket workers on this machine, each
in a directory and a mount namespace of its own (``tests/remote_workers.py``: nothing of the
controller's disk in sight), and what crosses the wire per item.

The bytes are those of each test report as xdist serializes it for the controller (a conftest
in the controller's directory measures ``pytest_report_to_serializable``), the row and the
record (trajectory) in it. Prints figures; asserts nothing.

    python benchmarks/bench_remote.py [--sample N]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from remote_workers import socket_workers  # noqa: E402

MEASURE = """
import json

def pytest_runtest_logreport(report):
    config = pytest_runtest_logreport.config
    if config is None or hasattr(config, "workerinput") or report.when != "call":
        return
    data = config.hook.pytest_report_to_serializable(config=config, report=report)
    size = len(json.dumps(data, default=lambda o: None).encode())
    record = sum(len(str(v).encode()) for k, v in report.user_properties if k == "toolpolicy_record")
    with open("wire.jsonl", "a") as out:
        out.write(json.dumps({"bytes": size, "record": record}) + "\\n")

def pytest_configure(config):
    pytest_runtest_logreport.config = config

pytest_runtest_logreport.config = None
"""


def run(cwd: Path, sample: int, workers: list[str]) -> float:
    (cwd / "conftest.py").write_text(MEASURE, encoding="utf-8")
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--toolpolicy=ab",
            f"--toolpolicy-sample={sample}", "--toolpolicy-report=report", "--toolpolicy-no-view",
            *workers]  # fmt: skip
    start = time.monotonic()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    wall = time.monotonic() - start
    if done.returncode != 0:
        raise SystemExit(done.stdout[-2000:] + done.stderr[-2000:])
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=25, help="instances (default: all 25)")
    ns = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        local, remote = root / "local", root / "controller"
        local.mkdir()
        remote.mkdir()
        one = run(local, ns.sample, ["-n", "1"])
        with socket_workers(root, hidden=remote) as specs:
            two = run(remote, ns.sample, ["-d", *[a for s in specs for a in ("--tx", s)]])
        sizes = [json.loads(line) for line in (remote / "wire.jsonl").read_text().splitlines()]
        print(f"bundled A/B, {ns.sample} instances x 2 arms ({len(sizes)} items), sim:")
        print(f"  1 local worker (-n 1):      {one:.1f} s")
        print(f"  2 socket workers (-d --tx): {two:.1f} s  ({one / two:.2f}x)")
        total = sorted(s["bytes"] for s in sizes)
        record = sorted(s["record"] for s in sizes)
        print(
            f"  per item on the wire: median {total[len(total) // 2] / 1e3:.1f} kB, max "
            f"{total[-1] / 1e3:.1f} kB (of which the record: median {record[len(record) // 2] / 1e3:.1f} kB)"
        )


if __name__ == "__main__":
    main()
