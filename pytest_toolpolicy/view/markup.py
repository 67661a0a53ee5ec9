"""HTML pieces shared by the pages. Everything from a run goes through ``text`` (redacted,
shortened, escaped); nothing a model wrote is ever placed in markup unescaped."""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Iterable
from typing import Any

# A field longer than this is cut on its page (the full text stays in trajectories.jsonl): one
# 100 MB reply must not make a page the browser cannot open.
MAX_FIELD = 100_000

Clean = Callable[[str], str]  # the redactor


def text(value: Any, clean: Clean, limit: int = MAX_FIELD) -> str:
    """Any value as escaped, redacted text; structures as indented JSON."""
    if not isinstance(value, str):
        value = json.dumps(value, indent=1, ensure_ascii=False, default=str)
    value = clean(value)
    cut = ""
    if len(value) > limit:
        cut = f"\n[… {len(value) - limit:,} more characters: see trajectories.jsonl]"
        value = value[:limit]
    return html.escape(value + cut, quote=True)


def attr(value: str) -> str:
    return html.escape(value, quote=True)


def pre(value: Any, clean: Clean, css: str = "") -> str:
    klass = f' class="{css}"' if css else ""
    return f"<pre{klass}>{text(value, clean)}</pre>"


def details(summary: str, body: str, open_: bool = False) -> str:
    """A collapsed block; ``summary`` is already markup."""
    return f"<details{' open' if open_ else ''}><summary>{summary}</summary>{body}</details>"


def badge(label: str, tone: str = "") -> str:
    return f'<span class="badge {tone}">{html.escape(label)}</span>'


def table(
    header: Iterable[str], rows: Iterable[Iterable[str]], numeric: set[int] | None = None
) -> str:
    """Cells are markup already (escaped by the caller)."""
    numeric = numeric or set()
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="num">{c}</td>' if i in numeric else f"<td>{c}</td>"
            for i, c in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def json_island(element_id: str, data: Any) -> str:
    """Data for a page's script: JSON in a non-executed script element. ``<``, ``>`` and ``&``
    are escaped as JSON \\u sequences, so no string in it can close the element."""
    payload = (
        json.dumps(data, ensure_ascii=False)
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
    )
    return f'<script type="application/json" id="{attr(element_id)}">{payload}</script>'


def page(
    title: str, body: str, *, root: str = "", scripts: Iterable[str] = (), data: str = ""
) -> str:
    """A whole page. ``root``: the path back to the site's top ("" or "../")."""
    script_tags = "".join(f'<script src="{root}{s}"></script>' for s in scripts)
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title>"
        '<link rel="icon" href="data:,">'  # no favicon request, so no 404 in the console
        f'<link rel="stylesheet" href="{root}site.css"></head>\n'
        f'<body{data}><header class="top"><a href="{root}index.html">decision</a>'
        f'<a href="{root}items.html">items</a></header>\n<main>{body}</main>\n'
        f"{script_tags}</body></html>\n"
    )
