"""The later rounds' added cost per turn, side by side in one run with the spec's deterministic
gate (triggers + retrieval + validation + trust gate over a 200-entry ledger, as
``bench_policy.py`` measures it): row 9's confidence trigger (reading a reply's logprobs, 256
tokens with their top 5), row 13's hybrid retrieval (one MiniLM embedding of the query; the
tools' vectors are computed once), row 12's bandit (a pick and a pay in its SQLite file, once
per run rather than per turn) and row 10's probe state. Prints p50 and p95 per stage; not a test.

    .venv/bin/python benchmarks/bench_rounds.py
"""

from __future__ import annotations

import shutil
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from bench_policy import ISSUE, gate_turn

from pytest_toolpolicy.demo import EXAMPLE
from pytest_toolpolicy.policy.confidence import ConfidenceTrigger
from pytest_toolpolicy.policy.config import PolicyConfig
from pytest_toolpolicy.policy.retrieve import retrieve
from pytest_toolpolicy.primitives import Toolbox, Workspace
from pytest_toolpolicy.primitives.embedder import load_embedder
from pytest_toolpolicy.run.bandit import BanditSpec, BanditStore


def timed(step: Callable[[], object], runs: int) -> tuple[float, float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        step()
        samples.append(time.perf_counter() - start)
    samples.sort()
    return samples[len(samples) // 2] * 1e3, samples[int(len(samples) * 0.95)] * 1e3


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "memstore"
        shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("__pycache__"))
        box = Toolbox(root, workspace=Workspace.create(root))
        config = PolicyConfig()
        ledger, gate = gate_turn(box)
        latest = ledger.latest.line() if ledger.latest else ""

        top = [[f"t{k}", -0.5 * k] for k in range(5)]
        record = {"extra": {"logprobs": [{"token": "t0", "logprob": -0.3, "top": top}] * 256}}
        trigger = ConfidenceTrigger("lp_mean", -1.0, "below")
        embedder = load_embedder()
        hybrid = PolicyConfig(ranking="hybrid")
        retrieve(ISSUE, latest, hybrid, embedder)  # the tools' vectors, once

        # A new query each time, and new across runs: the embedder keeps every vector it made
        # in a disk cache, so a query seen before would cost a lookup, not an embedding.
        asked = iter(range(10**9))
        run = uuid.uuid4().hex

        def fresh_hybrid() -> None:
            retrieve(f"{ISSUE} {run}-{next(asked)}", latest, hybrid, embedder)

        rows = [
            ("deterministic gate (the spec's)", timed(gate, 2000)),
            ("+ confidence trigger (row 9)", timed(lambda: trigger.withhold(record), 2000)),
            ("+ hybrid retrieval (row 13)", timed(fresh_hybrid, 300)),
            ("  map retrieval, for comparison", timed(lambda: retrieve(ISSUE, latest, config), 2000)),
            ("+ bandit pick and pay (row 12, per run)", _bandit(Path(tmp))),
        ]  # fmt: skip
        states = _probe_states(ISSUE + "\n" + "\n".join(e.line() for e in ledger.entries))
        if states is not None:
            rows.append(("+ probe's hidden state (row 10)", states))
        print("per turn, this machine, one process (p50 / p95):")
        for name, (p50, p95) in rows:
            print(f"  {name:40} {p50:8.3f} ms  {p95:8.3f} ms")


def _bandit(tmp: Path) -> tuple[float, float]:
    """A run's pick (UCB1 over every pull so far, in one transaction) and its pay, 1,000 runs
    into a file that grows with them, as a long session's does."""
    store = BanditStore(tmp / "memo.bandit.sqlite")
    spec = BanditSpec("lp_mean", (-2.0, -1.5, -1.0, -0.5))
    items = iter(range(10**9))

    def run() -> None:
        item = f"i{next(items)}"
        arm, _ = store.pick("b", spec, item)
        store.pay("b", spec, item, float(arm % 2))

    try:
        return timed(run, 1000)
    finally:
        store.close()


def _probe_states(prompt: str) -> tuple[float, float] | None:
    """The hidden state of a policy-sized prompt from gemma-3-270m in embeddings mode (one
    thread), 5 times; None without the [local] extra."""
    try:
        from pytest_toolpolicy.policy.hidden import states_for
    except ImportError:
        return None
    state = states_for("local:gemma3-270m")
    if state([{"role": "user", "content": "start"}]) is None:  # starts the server
        return None
    print(f"(probe prompt: {len(prompt)} characters)")
    # A new first token each time: no prefix of a prompt is served from the server's cache.
    fresh = iter(range(10**9))
    return timed(lambda: state([{"role": "user", "content": f"#{next(fresh)} {prompt}"}]), 5)


if __name__ == "__main__":
    main()
