"""Build the viewer's static site from a report directory: ``index.html`` (the decision),
``items.html`` (every item, filterable) and ``i/<instance>.html`` (arms side by side).

The site works from files, offline: no server, no network, no external script. It is rebuilt
whole each time; pages of instances no longer in the report are removed.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..paths import write_atomic
from .item_html import render_item
from .pages import index_page, instance_page, item_rows, items_page, page_name
from .redact import Redactor
from .source import read_report

if TYPE_CHECKING:
    import pandas as pd

SITE = "view"
STATIC = ("site.css", "items.js", "instance.js")


class SiteError(Exception):
    """The site cannot be written where asked."""


@dataclass(frozen=True)
class Site:
    index: Path
    pages: int
    bytes: int
    seconds: float
    notes: list[str] = field(default_factory=list)  # what the site could not show, and why


def build_site(
    report_dir: Path,
    out: Path | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    table: pd.DataFrame | None = None,
) -> Site:
    """Read ``report_dir`` and write the site into ``out`` (default ``report_dir/view``).
    ``environ``: whose secret-named variables are redacted (default: this process's);
    ``table``: the report's decision table when the caller has it (the session, just after
    writing the report), else computed from ``results.parquet``."""
    start = time.monotonic()
    report = read_report(Path(report_dir))
    out = Path(out) if out is not None else report.directory / SITE
    _prepare(out)
    clean = Redactor(environ)
    written: list[Path] = []

    def write(path: Path, markup: str) -> None:
        written.append(write_atomic(path, lambda p: p.write_text(markup, encoding="utf-8")))

    for name in STATIC:
        write(out / name, resources.files(__package__).joinpath("static", name).read_text("utf-8"))

    from ..decide.table import decision_table

    results = report.results
    if table is None:
        table = decision_table(results, report.meta)
    write(out / "index.html", index_page(table, report.meta, results, clean))
    write(out / "items.html", items_page(item_rows(results), clean))
    # One line for each file whose malformed lines were skipped.
    skipped = (report.trajectories.skipped, report.instances_skipped)
    notes = [s.summary() for s in skipped if s]
    pages = {}
    for instance_id, group in results.groupby("instance_id", sort=False):
        iid = str(instance_id)
        located = report.trajectories.by_instance.get(iid, {})
        instance = report.instances.get(iid)
        rendered = []
        for _, row in group.iterrows():
            item = str(row.get("item") or f"{iid}-{row['variant']}")
            where = located.get(item)
            record: dict[str, Any] | None = None
            if where is not None:
                try:
                    record = report.trajectories.read(where)
                except (OSError, ValueError) as exc:
                    notes.append(
                        f"{item}: its trajectory (line {where.line}) cannot be read: {exc}"
                    )
            rendered.append(
                (
                    item,
                    render_item(item, record, {str(k): v for k, v in row.items()}, instance, clean),
                )
            )
        name = page_name(iid)
        pages[name] = True
        write(out / "i" / name, instance_page(iid, instance, rendered, clean))
    _remove_stale(out / "i", set(pages))
    size = sum(p.stat().st_size for p in written)
    return Site(out / "index.html", len(written), size, time.monotonic() - start, notes)


def _prepare(out: Path) -> None:
    """The site's directories, made here: never followed through a link planted in their place."""
    for directory in (out, out / "i"):
        if directory.is_symlink():
            raise SiteError(f"{directory} is a symbolic link; the site is not written through it")
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SiteError(f"cannot make {directory}: {exc}") from None
        if not directory.is_dir():
            raise SiteError(f"{directory} exists and is not a directory")


def _remove_stale(directory: Path, keep: set[str]) -> None:
    """Pages of an earlier build's instances: removed (a link is unlinked, never followed)."""
    with os.scandir(directory) as entries:
        for entry in entries:
            if entry.name.endswith(".html") and entry.name not in keep:
                os.unlink(entry.path)
