"""The decision table as text: the terminal summary, Markdown and HTML.

Every rendering opens with the same header, because a resolve rate means nothing without the
model, the dataset, whether the agent could see the FAIL_TO_PASS tests, and whether the "model"
was the fault-injecting simulator.
"""

from __future__ import annotations

import html
from typing import Any

import pandas as pd

from .compact import aligned, compact_header, compact_rows
from .failures import failure_lines
from .header import header_lines
from .summary import summary_lines, undecided

# The renderings, and the parts the viewer and the session's summary compose their own from.
__all__ = [
    "compact_header", "compact_rows", "failure_lines", "header_lines", "render_html",
    "render_markdown", "render_text", "summary_lines",
]  # fmt: skip


def render_text(table: pd.DataFrame, meta: dict[str, Any]) -> str:
    body = (
        aligned([compact_header(table), *compact_rows(table)]) if len(table) else ["(no results)"]
    )
    return "\n".join([*header_lines(meta), "", *body, "", *summary_lines(table)]) + "\n"


def render_markdown(table: pd.DataFrame, meta: dict[str, Any]) -> str:
    rows = compact_rows(table)
    header = compact_header(table)
    lines = [f"# {header_lines(meta)[0]}", "", *(f"{line}  " for line in header_lines(meta)[1:])]
    lines += ["", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    lines += ["", *(f"- {line}" for line in summary_lines(table))]
    # An undecided row's details are its reason, already in the summary, not criteria.
    details = [
        (v, r["details"])
        for v, r in table.iterrows()
        if isinstance(r["details"], str) and not undecided(r["verdict"])
    ]
    if details:
        lines += ["", "## Criteria", ""]
        lines += [f"- **{v}**: {d}" for v, d in details]
    return "\n".join(lines) + "\n"


def render_html(table: pd.DataFrame, meta: dict[str, Any]) -> str:
    head = "".join(f"<p>{html.escape(line, quote=False)}</p>\n" for line in header_lines(meta))
    summary = "".join(
        f"<li>{html.escape(line, quote=False)}</li>\n" for line in summary_lines(table)
    )
    title = html.escape(header_lines(meta)[0])
    return (
        f'<!doctype html>\n<html><head><meta charset="utf-8"><title>{title}</title></head><body>\n'
        f"{head}<ul>\n{summary}</ul>\n{table.to_html(na_rep='')}\n</body></html>\n"
    )
