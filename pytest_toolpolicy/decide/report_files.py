"""The decision table's report files: ``decision.md``, ``decision.csv``, ``decision.html`` and
``results.parquet``, each written whole (a reader never sees half a file)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from .. import jsonsafe
from ..paths import write_atomic
from .render import render_html, render_markdown
from .results import conform, escape_strings
from .table import decision_table


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else str(value)


def write_report(
    results: pd.DataFrame,
    meta: dict[str, Any],
    directory: Path,
    table: pd.DataFrame | None = None,
) -> dict[str, Path]:
    """Write decision.md, decision.csv, decision.html and results.parquet into ``directory``.
    ``table``: the decision table of ``results`` when the caller has it (the session computes
    it once, for the terminal, these files and the viewer), else computed here."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    # JSON-plain, as parquet metadata must be (a numpy int or a Path would not serialize), and
    # valid UTF-8, as every file here must be (pyarrow refuses a lone surrogate outright).
    meta = json.loads(jsonsafe.dumps({**meta, "report_dir": str(directory)}, default=_plain))
    stored = escape_strings(conform(results))
    decided = decision_table(stored, meta) if table is None else table
    # pandas keeps attrs in the parquet metadata, so the notebook renders the same header.
    stored.attrs["toolpolicy_meta"] = meta
    writers: dict[str, Callable[[Path], object]] = {
        "decision.md": lambda p: p.write_text(render_markdown(decided, meta), encoding="utf-8"),
        "decision.csv": lambda p: decided.to_csv(p),
        "decision.html": lambda p: p.write_text(render_html(decided, meta), encoding="utf-8"),
        "results.parquet": lambda p: stored.to_parquet(p, index=False),
    }
    # Readers (the notebook, a second terminal) never see a half-written report file.
    return {name: write_atomic(directory / name, write) for name, write in writers.items()}
