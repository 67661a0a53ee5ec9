"""The A/B session's costs, measured side by side in one run.

1. Wall time of the same A/B (a seeded sample, both arms, some ablated gates) serial (`-n 0`)
   and on two workers (`-n 2`), each from an empty memo (target: -n 2 <= 0.6x -n 0).
2. The counterfactual reruns' tool executions and model calls against what naive full reruns
   would run (every call of every rerun executed again; target <= 0.5x), read off the
   results of the runs above.

Figures come from `sim`, the fault-injecting simulator (not a language model): they measure the
harness, not a model.

    .venv/bin/python benchmarks/bench_ab.py [--sample 8] [--ablate trigger.test,validate.args]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

TEST_AB = Path(__file__).parents[1] / "evals" / "test_ab.py"


def run(workers: str, sample: int, ablate: str, root: Path) -> tuple[float, pd.DataFrame]:
    report = root / f"report-n{workers}"
    argv = [sys.executable, "-m", "pytest", str(TEST_AB), "-q", "-n", workers, "--toolpolicy=ab"]
    argv += [f"--toolpolicy-sample={sample}", f"--toolpolicy-report={report}"]
    argv += [f"--toolpolicy-ablate={ablate}"] if ablate else []
    start = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True)
    elapsed = time.monotonic() - start
    if done.returncode != 0:
        sys.exit(f"A/B run failed ({done.returncode}):\n{done.stdout[-3000:]}")
    return elapsed, pd.read_parquet(report / "results.parquet")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=8)
    parser.add_argument("--ablate", default="trigger.test,validate.args")
    ns = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-ab-") as tmp:
        serial, results = run("0", ns.sample, ns.ablate, Path(tmp))
        parallel, _ = run("2", ns.sample, ns.ablate, Path(tmp))
    items = len(results)
    print(f"A/B of {items} items ({ns.sample} instances, ablated: {ns.ablate or 'none'}; sim)")
    print(f"  -n 0: {serial:7.1f} s   -n 2: {parallel:7.1f} s   ratio {parallel / serial:.2f}x")
    ok = results[results["status"] == "ok"]
    reruns = int(ok["cf_reruns"].sum())
    model_live = int(ok["cf_model_calls"].sum())
    model_all = model_live + int(ok["cf_model_calls_cached"].sum())
    tools_live = int(ok["cf_tool_executions"].sum())
    tools_all = tools_live + int(ok["cf_tool_memo_hits"].sum())
    print(f"counterfactual reruns: {reruns} (from the serial run)")
    print(f"  model calls: {model_live} sent of {model_all} a naive rerun would send")
    print(f"  tool calls:  {tools_live} executed of {tools_all} a naive rerun would execute")
    naive = model_all + tools_all
    if naive:
        print(
            f"  together: {model_live + tools_live} of {naive} = {(model_live + tools_live) / naive:.2f}x"
        )


if __name__ == "__main__":
    main()
