"""The sandbox's cost, side by side: the same small pytest test run bare (a subprocess of this
interpreter) and through ``run_test`` in the sandbox, and ``execute`` against bare ``python -c``.

Prints medians and ratios (target: run_test in the sandbox <= 1.2x bare pytest). Runs are
interleaved so that drift in machine load hits both sides alike.

    .venv/bin/python benchmarks/bench_sandbox.py [--runs 7]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pytest_toolpolicy.primitives.execute import execute
from pytest_toolpolicy.primitives.run_test import run_test
from pytest_toolpolicy.primitives.sandbox import Sandbox, sandbox_env

TEST = "def test_one():\n    assert sum(range(10)) == 45\n"
TARGET = "tests/test_small.py::test_one"
PYTEST = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:toolpolicy", "--no-header"]


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def bare(argv: list[str], cwd: Path) -> None:
    # The sandbox's own environment, so both sides import and cache alike.
    env = sandbox_env(sys.executable, tempfile.gettempdir())
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, check=False)
    assert proc.returncode == 0, proc.stdout.decode() + proc.stderr.decode()


def checked(envelope: dict) -> None:
    assert envelope["ok"] and envelope["data"]["exit_code"] == 0, envelope


def compare(label: str, base: Callable[[], object], boxed: Callable[[], object], runs: int) -> None:
    base(), boxed()  # warm the page cache and the sandbox probe
    bases, boxes = [], []
    for _ in range(runs):
        bases.append(timed(base))
        boxes.append(timed(boxed))
    b, s = statistics.median(bases), statistics.median(boxes)
    b_min, s_min = min(bases), min(boxes)
    print(
        f"{label:<32} {b * 1000:8.1f} ms {s * 1000:8.1f} ms {s / b:6.2f}x {(s - b) * 1000:+8.1f} ms"
        f"   (min: {b_min * 1000:.1f} vs {s_min * 1000:.1f} ms, {s_min / b_min:.2f}x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    sandboxes = [Sandbox.from_env()]
    if sandboxes[0].mode == "bwrap":
        sandboxes.append(Sandbox.select("degraded"))
    with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as tmp:
        ws = Path(tmp)
        (ws / "tests").mkdir()
        (ws / "tests" / "test_small.py").write_text(TEST)
        print(f"median of {runs} interleaved runs each; python {sys.version.split()[0]}")
        print(f"{'':<32} {'bare':>11} {'sandboxed':>11} {'ratio':>7} {'overhead':>11}")
        for box in sandboxes:
            compare(
                f"run_test pytest [{box.mode}]",
                lambda: bare([sys.executable, *PYTEST, TARGET], ws),
                lambda box=box: checked(run_test(ws, box, TARGET, timeout=120)),
                runs,
            )
            compare(
                f"execute vs python -c [{box.mode}]",
                lambda: bare([sys.executable, "-c", "print(45)"], ws),
                lambda box=box: checked(execute(box, "print(45)", timeout=30)),
                runs,
            )
            compare(
                f"/bin/true [{box.mode}]",
                lambda: bare(["/bin/true"], ws),
                lambda box=box: box.run(
                    ["/bin/true"],
                    cwd=None,
                    writable=None,
                    stdin=None,
                    timeout=30,
                    merge_stderr=False,
                ),
                runs,
            )


if __name__ == "__main__":
    main()
