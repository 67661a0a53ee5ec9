"""What a local model's A/B cost on this machine, per arm, read from finished reports and
printed side by side: model calls, prompt tokens sent and processed (sent minus what the
server's prefix cache kept), the prefix reuse, completion tokens, model seconds, and the
prompt-processing and generation rates where the server reported them.

    .venv/bin/python benchmarks/bench_model_cost.py reports/qwen [OTHER_REPORT ...]

Give two reports (a run before a change and after it, on the same sample and seed) to see a
change's effect per arm in one table. Every figure is read from the report's
``trajectories.jsonl`` (the endpoint's own usage and each call's latency), so it is what ran,
not an estimate; a figure the report does not hold is shown as ``-``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class ArmCost:
    items: set[str] = field(default_factory=set)
    calls: int = 0
    prompt: int = 0
    cached: int = 0
    completion: int = 0
    seconds: float = 0.0
    item_seconds: dict[str, float] = field(default_factory=lambda: defaultdict(float))

    def add(self, item: str, completion: dict[str, Any]) -> None:
        usage = completion.get("usage") or {}
        self.items.add(item)
        self.calls += 1
        self.prompt += int(usage.get("prompt_tokens") or 0)
        self.cached += int(usage.get("cached_prompt_tokens") or 0)
        self.completion += int(usage.get("completion_tokens") or 0)
        latency = float(completion.get("latency_s") or 0.0)
        self.seconds += latency
        self.item_seconds[item] += latency

    def row(self) -> dict[str, str]:
        n = max(len(self.items), 1)
        processed = self.prompt - self.cached
        seconds = sorted(self.item_seconds.values())
        return {
            "items": str(len(self.items)),
            "model calls": str(self.calls),
            "prompt tokens sent": f"{self.prompt:,}",
            "prompt tokens processed": f"{processed:,}",
            "processed per item": f"{processed / n:,.0f}",
            "prefix reuse": f"{self.cached / self.prompt:.0%}" if self.prompt else "-",
            "completion tokens": f"{self.completion:,}",
            "model s per item (mean)": f"{self.seconds / n:,.0f}",
            "model s per item (min-max)": f"{seconds[0]:,.0f}-{seconds[-1]:,.0f}"
            if seconds
            else "-",
            "tokens/s (processed+generated)": (
                f"{(processed + self.completion) / self.seconds:,.1f}" if self.seconds else "-"
            ),
        }


def costs(report: Path) -> dict[str, ArmCost]:
    arms: dict[str, ArmCost] = defaultdict(ArmCost)
    with open(report / "trajectories.jsonl", encoding="utf-8") as lines:
        for line in lines:
            trajectory = json.loads(line)
            arm = arms[str(trajectory["variant"])]
            for turn in trajectory["turns"]:
                # a turn's reply, then the re-selections a rejection asked for (the policy's)
                for completion in [turn.get("completion"), *turn.get("extra_selections", ())]:
                    if completion:
                        arm.add(str(trajectory["instance_id"]), completion)
    return dict(arms)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", type=Path)
    args = parser.parse_args(argv)
    columns: dict[str, dict[str, str]] = {}
    for report in args.reports:
        for variant, cost in sorted(costs(report).items()):
            columns[f"{report.name}:{variant}"] = cost.row()
    if not columns:
        print("no model calls in these reports")
        return 1
    names = list(next(iter(columns.values())))
    width = max(len(n) for n in names)
    heads = list(columns)
    print(" " * width + " | " + " | ".join(heads))
    for name in names:
        cells = (columns[h][name].rjust(len(h)) for h in heads)
        print(name.ljust(width) + " | " + " | ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
