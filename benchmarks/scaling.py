"""Shared by the benchmarks that show a scan linear in its input: time a call, keep the best of
several runs, and print the growth per doubling of the size (about 2× is linear, 4× square)."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import Any

MB = 1_000_000
SIZES = (MB // 4, MB // 2, MB, 2 * MB)


def timed(fn: Callable[[Any], Any], arg: Any) -> tuple[float, Any]:
    """One call's time, with the garbage collector off as ``timeit`` has it: its passes over
    every live object would otherwise land in one size's timing and not another's."""
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        out = fn(arg)
        return time.perf_counter() - start, out
    finally:
        gc.enable()


def best(fn: Callable[[Any], Any], arg: Any, runs: int) -> float:
    return min(timed(fn, arg)[0] for _ in range(runs))


def growth(times: list[float]) -> str:
    return "  ".join(f"{b / a:4.1f}×" for a, b in zip(times, times[1:], strict=False))
