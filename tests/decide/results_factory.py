"""Build ``results`` frames that follow the documented schema, for the A/B back-half tests."""

from __future__ import annotations

from typing import Any

import pandas as pd

from pytest_toolpolicy.decide.schema import COLUMNS
from pytest_toolpolicy.decide.variants import gate_of


def item(**overrides: Any) -> dict[str, Any]:
    """One row with every schema column; a resolved, priced, error-free policy item by default."""
    row: dict[str, Any] = {
        "instance_id": "repo__pkg-1",
        "item": "",
        "arm": "policy",
        "variant": "policy",
        "gate": None,
        "model": "sim",
        "seed": 0,
        "trial": 1,
        "repo": "repo/pkg",
        "dataset": "evals/instances",
        "tests_visible": True,
        "sandbox": "bwrap",
        "status": "ok",
        "error": None,
        "resolved": True,
        "grade_reverted": "[]",
        "grade_flagged": "[]",
        "grade_tampering": "[]",
        "outcome": "stop",
        "underspecified": False,
        "cost_usd": 0.1,
        "tokens": 1000,
        "prompt_tokens": 800,
        "completion_tokens": 200,
        "cached_tokens": 0,
        "tokens_estimated": True,
        "tokens_unknown": False,
        "turns": 4,
        "replies": 4,
        "replies_parsed": 4,
        "calls": 4,
        "agent": "builtin",
        "calls_observable": True,
        "call_precision_observable": True,
        "necessary_calls": 2,
        "selection_correct": 2,
        "selection_attempted": 3,
        "gold_source": "hand",
        "gold_detail": None,
        "abstained": False,
        "gate_acts": "{}",
        "gate_blocked": "{}",
        "rejections": "{}",
        "reselections": 0,
        "cf_reruns": 4,
        "cf_model_calls": 8,
        "cf_model_calls_cached": 2,
        "cf_tool_executions": 10,
        "cf_tool_memo_hits": 6,
        "cf_cost_usd": 0.05,
        "cf_tokens": 500,
        "bandit_arm": "",
        "bandit_seq": 0,
        "duration_s": 1.5,
    }
    variant = overrides.get("variant", row["variant"])
    row |= {"arm": "current" if variant == "current" else "policy", "gate": gate_of(variant)}
    row |= overrides
    if not row["item"]:
        trial = f"-t{row['trial']}" if "trial" in overrides else ""
        row["item"] = f"{row['instance_id']}-{row['variant']}{trial}"
    assert set(row) == set(COLUMNS), set(row) ^ set(COLUMNS)
    return row


def frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=list(COLUMNS))


def variant_rows(
    variant: str, resolved: list[bool], start: int = 0, **overrides: Any
) -> list[dict[str, Any]]:
    """One item per instance ``i-<start>``, ``i-<start+1>``, … with the given resolved flags."""
    return [
        item(instance_id=f"i-{i}", variant=variant, resolved=r, **overrides)
        for i, r in enumerate(resolved, start)
    ]


def failed_rows(
    variant: str,
    n: int,
    error: str = "harness fault: sandbox died",
    start: int = 0,
    **overrides: Any,
) -> list[dict[str, Any]]:
    """``n`` unmeasured items (a harness fault by default) on ``i-<start>``, …, as a session
    records them: every column filled, nothing resolved, the cause in ``error``."""
    status = "infra_error" if error.startswith("infra error") else "error"
    return variant_rows(variant, [False] * n, start, status=status, error=error, **overrides)


def endpoint_error_rows(
    variant: str, n: int, start: int = 0, resolved: bool = False, **overrides: Any
) -> list[dict[str, Any]]:
    """``n`` items the endpoint ended on ``i-<start>``, …, as a session records them: measured,
    with what their answered calls cost; ``resolved`` is how their workspace graded."""
    return variant_rows(
        variant, [resolved] * n, start, status="model_error", outcome="model_error",
        error="model error: server error 503 after 4 retries: overloaded", **overrides,
    )  # fmt: skip
