"""The policy's deterministic overhead per turn, and whether the prompt grows with the run.

Prints figures from one run; nothing here is a timed assertion. Targets (issue 'policy'):
triggers + retrieval + validation + trust gate with a 200-entry ledger, p50 ≤ 1 ms; prompt size
at turn 50 vs turn 5 of one trajectory ≤ 1.2×.
"""

from __future__ import annotations

import json
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pytest_toolpolicy.demo import EXAMPLE
from pytest_toolpolicy.models.scripted import ScriptedModel
from pytest_toolpolicy.policy.config import PolicyConfig
from pytest_toolpolicy.policy.ledger import Ledger
from pytest_toolpolicy.policy.loop import PolicyLoop, Task
from pytest_toolpolicy.policy.prompt import build_prompt
from pytest_toolpolicy.policy.retrieve import retrieve
from pytest_toolpolicy.policy.triggers import symbol_trigger
from pytest_toolpolicy.policy.trust import trust_gate
from pytest_toolpolicy.policy.validate import validate
from pytest_toolpolicy.primitives import Toolbox, Workspace
from pytest_toolpolicy.types import Observation, ToolCall

ISSUE = (
    "memstore.MemStore.recall returns a value at exactly its expiry time; run the test "
    "tests/test_store.py::test_expired_value_is_gone to see it fail and fix the comparison."
)


def gate_turn(box: Toolbox) -> tuple[Ledger, Callable[[], None]]:
    """A 200-entry ledger, and one turn of the deterministic stages over it (triggers,
    retrieval, validation, trust gate) as a call to time (``bench_rounds.py`` times it too)."""
    config = PolicyConfig()
    selector = "memstore.store.MemStore.recall"
    read = box.call("read_entity", {"selector": selector})
    envelope = box.call("search_symbol", {"query": "MemStore.recall"})
    ledger = Ledger()
    for i in range(200):
        ledger = ledger.append(
            Observation("read_entity", f"{selector}{i}", "ok", read, cites=(selector,))
        )
    ledger, _ = symbol_trigger(
        [ISSUE], ledger, box.call, config
    )  # fire once; later turns re-check keys
    call = ToolCall(
        "edit_entity", {"selector": selector, "search": "> expires", "replace": ">= expires"}
    )
    search = ToolCall("search_symbol", {"query": "MemStore.recall"})
    latest = ledger.latest.line()

    def turn() -> None:
        symbol_trigger([latest], ledger, box.call, config)
        retrieve(ISSUE, latest, config)
        validate(call, ledger, box.index, config)
        trust_gate(search, envelope, config)

    return ledger, turn


def overhead(box: Toolbox) -> None:
    config = PolicyConfig()
    ledger, turn = gate_turn(box)
    latest = ledger.latest.line()
    samples = []
    for _ in range(2000):
        start = time.perf_counter()
        turn()
        samples.append(time.perf_counter() - start)
    samples.sort()
    p50, p95 = samples[len(samples) // 2] * 1e3, samples[int(len(samples) * 0.95)] * 1e3
    candidates = retrieve(ISSUE, latest, config)
    prompt = [time.perf_counter()]
    for _ in range(500):
        build_prompt(candidates, ledger, ISSUE, config, latest=ledger.latest)
    per_prompt = (time.perf_counter() - prompt[0]) / 500 * 1e3
    print(
        f"deterministic overhead per turn (triggers + retrieval + validation + trust gate, "
        f"ledger of {len(ledger.entries)}): p50 {p50:.3f} ms, p95 {p95:.3f} ms (target p50 ≤ 1 ms); "
        f"prompt assembly {per_prompt:.3f} ms"
    )


def prompt_growth(root: Path) -> None:
    queries = ["recall", "remember", "forget", "MemStore", "store", "clock"]
    replies = [
        json.dumps({"tool": "search_symbol", "args": {"query": queries[i % 6]}}) for i in range(50)
    ]
    box = Toolbox(root, workspace=Workspace(root))
    loop = PolicyLoop(
        box,
        ScriptedModel(replies + ['{"tool": "stop", "args": {"reason": "x"}}']),
        PolicyConfig(max_turns=60, max_noop_turns=60),
    )
    traj = loop.run(Task("bench", ISSUE, None))
    size = [sum(len(m["content"]) for m in turn.prompt) for turn in traj.turns]
    print(
        f"prompt size: turn 5 {size[4]} chars, turn 50 {size[49]} chars → {size[49] / size[4]:.2f}× "
        f"(target ≤ 1.2×); median over turns 20-50: {statistics.median(size[19:50]):.0f} chars"
    )


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "memstore"
        shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("__pycache__"))
        box = Toolbox(root, workspace=Workspace.create(root))
        overhead(box)
        prompt_growth(root)


if __name__ == "__main__":
    main()
