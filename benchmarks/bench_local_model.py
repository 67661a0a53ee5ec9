"""The local model's speed on this machine, 1 thread against 2, measured side by side in one
run: prompt and generated tokens per second as llama.cpp's server reports them (its
``timings``), over the same prompts, alternating so background load hits both alike.

The model is google/gemma-3-270m (``local:gemma3-270m``), a tiny *base* model: these are
throughput figures for the harness, not a model's skill.

    .venv/bin/python benchmarks/bench_local_model.py [--rounds 3] [--tokens 64] [--busy 1]

``--busy N`` keeps N busy-looping processes running throughout, as the A/B's own test runs
and grading keep a core busy beside the server.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
import urllib.request

from pytest_toolpolicy.models.local.server import LocalServer, ServerSettings
from pytest_toolpolicy.models.local.weights import resolve

# ~900 prompt tokens (the baseline's system prompt is about that long), distinct per round so
# the server's prompt cache cannot serve one round from the last.
PARAGRAPH = "The inventory module keeps stock counts per warehouse and reorders below a floor. "


def ask(url: str, tag: str, tokens: int) -> dict[str, float]:
    """The server's own timings for a distinct ~900-token prompt (``tag`` first, so no prompt
    cache serves it from another) and exactly ``tokens`` generated."""
    prompt = f"{tag}. " + PARAGRAPH * 60 + "\nSummarize the above:"
    body = {
        "messages": [{"role": "user", "content": prompt}],
        "max_tokens": tokens,
        "temperature": 0,
        "ignore_eos": True,  # generate exactly `tokens`, so both settings do the same work
    }
    request = urllib.request.Request(
        f"{url}/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=1800) as reply:
        timings = json.loads(reply.read())["timings"]
    return {k: float(timings[k]) for k in ("prompt_per_second", "predicted_per_second")}


def measure(url: str, round_: int, tokens: int) -> tuple[float, float]:
    timings = ask(url, f"Round {round_}", tokens)
    return timings["prompt_per_second"], timings["predicted_per_second"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--busy", type=int, default=0)
    args = parser.parse_args()
    burners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)
    ]
    try:
        return _run(args)
    finally:
        for burner in burners:
            burner.kill()


def _run(args: argparse.Namespace) -> int:
    weights = resolve("gemma3-270m")
    figures: dict[int, list[tuple[float, float]]] = {1: [], 2: []}
    for round_ in range(args.rounds):
        for threads in (1, 2) if round_ % 2 == 0 else (2, 1):
            started = time.perf_counter()
            with LocalServer(weights, ServerSettings(threads=threads)) as server:
                up = time.perf_counter() - started
                figures[threads].append(measure(server.base_url, round_, args.tokens))
            print(f"round {round_} threads {threads}: up in {up:.1f} s, "
                  f"prompt {figures[threads][-1][0]:.0f} tok/s, "
                  f"generation {figures[threads][-1][1]:.1f} tok/s", flush=True)  # fmt: skip
    busy = f", {args.busy} busy process(es) beside it" if args.busy else ", idle"
    print(f"\nmedian over rounds (local:gemma3-270m, a 270M base model, CPU{busy}):")
    for threads, rows in figures.items():
        prompt = statistics.median(p for p, _ in rows)
        generation = statistics.median(g for _, g in rows)
        print(
            f"  {threads} thread(s): prompt {prompt:.0f} tok/s, generation {generation:.1f} tok/s"
        )
    one, two = (statistics.median(g for _, g in figures[t]) for t in (1, 2))
    print(f"  generation, 2 threads / 1 thread: {two / one:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
