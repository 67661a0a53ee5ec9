"""Two xdist workers asking one local server at once: one slot (they queue) against one slot
per worker (their requests are decoded in one batch), on 1 thread, side by side in one run.

Each round starts both servers in turn and has two clients send the same work at the same
moment: a distinct ~900-token prompt each, a fixed number of generated tokens. Printed per
setting: the wall time of the pair, and each client's prompt and generation rates as the
server reports them; then the ratio of wall times, which is what an A/B at ``-n 2`` waits.

    .venv/bin/python benchmarks/bench_local_slots.py [--model gemma3-270m] [--rounds 3]
        [--tokens 96]

The default model is google/gemma-3-270m, a tiny *base* model; ``--model
qwen2.5-coder-1.5b`` (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M, the ``qwen`` extra) measures the
model the Qwen A/B runs. These are throughput figures for the harness, not a model's skill.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from bench_local_model import ask  # the same request, run beside this file

from pytest_toolpolicy.models.local.server import LocalServer, ServerSettings
from pytest_toolpolicy.models.local.weights import resolve


def pair(url: str, tag: str, tokens: int) -> tuple[float, list[dict[str, float]]]:
    started = time.perf_counter()
    with ThreadPoolExecutor(2) as pool:
        replies = list(pool.map(lambda n: ask(url, f"{tag} client {n}", tokens), (1, 2)))
    return time.perf_counter() - started, replies


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="gemma3-270m")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=96)
    args = parser.parse_args()
    weights = resolve(args.model)
    walls: dict[int, list[float]] = {1: [], 2: []}
    for round_ in range(args.rounds):
        for slots in (1, 2) if round_ % 2 == 0 else (2, 1):  # alternated: load hits both
            with LocalServer(weights, ServerSettings(threads=1, parallel=slots)) as server:
                wall, replies = pair(server.base_url, f"Round {round_} slots {slots}", args.tokens)
            walls[slots].append(wall)
            rates = ", ".join(
                f"prompt {r['prompt_per_second']:.0f} / gen {r['predicted_per_second']:.1f} tok/s"
                for r in replies
            )
            print(f"round {round_} slots {slots}: pair in {wall:.1f} s ({rates})", flush=True)
    one, two = (statistics.median(walls[s]) for s in (1, 2))
    print(f"\nmedian wall time of a pair of concurrent requests (local:{args.model}, 1 thread):")
    print(f"  1 slot (queued):   {one:.1f} s")
    print(f"  2 slots (batched): {two:.1f} s")
    print(f"  1 slot / 2 slots: {one / two:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
