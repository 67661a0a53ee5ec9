"""The site's pages: the decision (index), the item list, one page per instance. Pure: the
report's data in, a page's markup out."""

from __future__ import annotations

import hashlib
import html
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from .markup import Clean, attr, json_island, page, table
from .svg import bars
from .values import integer_text, number, number_text, plain, truth, yes_no

if TYPE_CHECKING:
    import pandas as pd

Record = dict[str, Any]

# Index-table column -> the item filter its cells link to (beside the row's variant).
CELL_FILTERS: dict[str, dict[str, str]] = {
    "resolve": {"resolved": "yes"},
    "abstain": {"abstained": "yes"},
    "false-abst": {"abstained": "yes", "underspecified": "no"},
}
# The item list's filters (items.js fills each with the values the items have).
FILTERS = ("variant", "outcome", "resolved", "abstained", "underspecified", "flipped", "status")
PER_ARM = (
    ("resolve rate", "resolve", ".3f"),
    ("cost per instance (USD)", "cost", ".4f"),
    ("tokens per instance", "tokens", ".0f"),
    ("call precision", "call_precision", ".3f"),
    ("selection accuracy", "selection_accuracy", ".3f"),
    ("false abstention", "false_abstention", ".3f"),
)
DELTAS = (
    ("resolve difference vs its reference", "d_resolve", "+.3f"),
    ("cost ratio vs its reference", "cost_ratio", ".2f"),
)


def page_name(instance_id: str) -> str:
    """A file name for an instance's page: safe characters, and a hash so that two ids that
    clean to the same text (or an id like ``../x``) never share or escape the directory."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", instance_id).lstrip(".")[:80] or "instance"
    digest = hashlib.sha256(instance_id.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{safe}-{digest}.html"


def _link(href: str, label: str) -> str:
    return f'<a href="{attr(href)}">{html.escape(label)}</a>'


def _filters(variant: str, extra: dict[str, str] | None = None) -> str:
    return "items.html#" + urlencode({"variant": variant, **(extra or {})})


def index_page(table: pd.DataFrame, meta: Record, results: pd.DataFrame, clean: Clean) -> str:
    from ..decide.render import compact_header, compact_rows, header_lines, summary_lines

    head = header_lines(meta)
    lines = "".join(f'<p class="meta">{html.escape(clean(line))}</p>' for line in head[1:])
    verdicts = "".join(f"<li>{html.escape(clean(line))}</li>" for line in summary_lines(table))
    header = compact_header(table)
    rows = []
    for variant, cells in zip(table.index, compact_rows(table), strict=True):
        linked = [_link(_filters(str(variant)), cells[0])]
        for name, cell in zip(header[1:], cells[1:], strict=True):
            linked.append(_link(_filters(str(variant), CELL_FILTERS.get(name)), cell))
        errors = int(table.loc[variant, "n_errors"]) if "n_errors" in table else 0
        linked.append(
            _link(_filters(str(variant), {"status": "error"}), str(errors)) if errors else "0"
        )
        rows.append(linked)
    numeric = set(range(1, len(header) + 1))
    decision = table_html(header + ["faults"], rows, numeric)
    charts = "".join(
        bars(title, [(str(v), number(r.get(column))) for v, r in table.iterrows()], fmt)
        for title, column, fmt in PER_ARM
        if column in table
    )
    judged = table[table["reference"].notna()] if "reference" in table else table.iloc[0:0]
    deltas = "".join(
        bars(title, [(str(v), number(r.get(column))) for v, r in judged.iterrows()], fmt)
        for title, column, fmt in DELTAS
        if column in judged and len(judged)
    )
    body = (
        f"<h1>{html.escape(clean(head[0]))}</h1>{lines}<ul>{verdicts}</ul>"
        "<h2>decision table</h2>"
        '<p class="note">every cell links to the items behind it</p>'
        f'{decision}<h2>measures per arm</h2><div class="charts">{charts}</div>'
        + (
            f'<h2>each variant against its reference</h2><div class="charts">{deltas}</div>'
            if deltas
            else ""
        )
        + "<h2>instances</h2>"
        + instances_table(results)
    )
    return page("toolpolicy: " + head[0], body)


def table_html(header: list[str], rows: list[list[str]], numeric: set[int]) -> str:
    return table((html.escape(h) for h in header), rows, numeric)


def instances_table(results: pd.DataFrame) -> str:
    """Each instance with its arms' outcomes, flips first (where the arms disagree)."""
    variants = list(dict.fromkeys(str(v) for v in results["variant"]))
    shown = [v for v in ("current", "policy") if v in variants] or variants[:2]
    rows = []
    for instance_id, group in results.groupby("instance_id", sort=True):
        by_variant = {str(v): g for v, g in group.groupby("variant")}
        cells = [_link("i/" + page_name(str(instance_id)), str(instance_id))]
        marks = []
        for variant in shown:
            g = by_variant.get(variant)
            mark = "" if g is None else _marks(g)
            marks.append(mark)
            cells.append(html.escape(mark))
        flipped = len(set(marks)) > 1
        rows.append((not flipped, str(instance_id), cells + ["yes" if flipped else ""]))
    rows.sort(key=lambda r: (r[0], r[1]))
    return table_html(["instance", *shown, "flipped"], [r[2] for r in rows], set())


def _marks(group: pd.DataFrame) -> str:
    """✓ resolved, ✗ not, ! a fault; one mark a trial."""
    out = []
    for _, row in group.iterrows():
        out.append(
            "!" if row.get("status") != "ok" else ("✓" if truth(row.get("resolved")) else "✗")
        )
    return "".join(out)


def item_rows(results: pd.DataFrame) -> list[Record]:
    """The item list's data: one plain record per row, every value a string or a number."""
    resolved_current = {
        (r["instance_id"], trial_of(r.get("trial"))): r.get("resolved")
        for _, r in results.iterrows()
        if r["variant"] == "current" and r.get("status") == "ok"
    }
    out = []
    for _, r in results.iterrows():
        key = (r["instance_id"], trial_of(r.get("trial")))
        base = resolved_current.get(key)
        flipped = (
            ""
            if r["variant"] == "current" or base is None or r.get("status") != "ok"
            else ("yes" if bool(truth(r.get("resolved"))) != bool(truth(base)) else "no")
        )
        out.append(
            {
                "item": str(r.get("item") or f"{r['instance_id']}-{r['variant']}"),
                "page": page_name(str(r["instance_id"])),
                "variant": str(r["variant"]),
                "trial": trial_of(r.get("trial")),
                "status": str(r.get("status")),
                "outcome": plain(r.get("outcome")),
                "resolved": yes_no(r.get("resolved")),
                "abstained": yes_no(r.get("abstained")),
                "underspecified": yes_no(r.get("underspecified")),
                "flipped": flipped,
                "turns": integer_text(r.get("turns")),
                "tokens": integer_text(r.get("tokens")),
                "cost": number_text(r.get("cost_usd"), ".5f"),
                "seconds": number_text(r.get("duration_s"), ".1f"),
                "error": plain(r.get("error"))[:300],
            }
        )
    return out


def items_page(records: list[Record], clean: Clean) -> str:
    for record in records:  # errors can quote a model's reply or an endpoint's message
        record["error"] = clean(record["error"])
    selects = "".join(
        f'<label>{key} <select id="filter-{key}"><option value="">all</option></select></label>'
        for key in FILTERS
    )
    header = "".join(
        f"<th>{h}</th>"
        for h in (
            "item", "variant", "trial", "status", "outcome", "resolved", "flipped vs current",
            "turns", "tokens", "cost (USD)", "seconds", "error",
        )
    )  # fmt: skip
    body = (
        "<h1>items</h1>"
        f'<p class="filters">{selects}</p><p id="items-count"></p>'
        f'<table><thead><tr>{header}</tr></thead><tbody id="items-body"></tbody></table>'
        + json_island("items-data", records)
    )
    return page("toolpolicy: items", body, scripts=["items.js"])


def instance_page(
    instance_id: str, instance: Record | None, items: list[tuple[str, str]], clean: Clean
) -> str:
    """``items``: (item id, its rendered markup), in the report's order."""
    ids = [i for i, _ in items]
    baseline = next(
        (i for i in ids if i.endswith("-current") or "-current-t" in i), ids[0] if ids else ""
    )
    candidate = next(
        (i for i in ids if i.endswith("-policy") or "-policy-t" in i),
        next((i for i in ids if i != baseline), baseline),
    )
    issue = ""
    if instance:
        issue = (
            "<details><summary>the issue</summary>"
            f"<pre>{html.escape(clean(str(instance.get('problem_statement', ''))))}</pre></details>"
        )
        if instance.get("underspecified"):
            issue += '<p class="warn">under-specified: the right answer is to ask</p>'
    templates = "".join(
        f'<template class="item" data-item="{attr(item)}">{markup}</template>'
        for item, markup in items
    )
    columns = "".join(
        f'<section><label>{side} <select id="pick-{side}"></select></label>'
        f'<div id="col-{side}"></div></section>'
        for side in ("left", "right")
    )
    body = (
        f"<h1>{html.escape(instance_id)}</h1>{issue}"
        f'<p class="note">{len(items)} items; pick one for each column</p>'
        f'<div class="pair">{columns}</div>{templates}'
    )
    data = f' data-baseline="{attr(baseline)}" data-candidate="{attr(candidate)}"'
    return page(f"toolpolicy: {instance_id}", body, root="../", scripts=["instance.js"], data=data)


def trial_of(value: Any) -> int | None:
    out = number(value)
    return None if out is None else int(out)
