"""How much of a benchmark this machine can judge, per repository: rows, validated, infra errors
by cause, failures by cause — from validation rows (``validate.py``), the ones of this run or
those recorded by earlier runs (``validation_log``: one JSON line per row as it finished,
the latest per instance counting).
"""

from __future__ import annotations

import dataclasses
import threading
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from .. import jsonsafe
from ..paths import cache_dir
from .validate import ValidationRow

_LOCK = threading.Lock()


def validation_log() -> Path:
    """Where ``toolpolicy validate`` records its rows unless told otherwise."""
    return cache_dir() / "validation" / "rows.jsonl"


def record_row(path: Path, row: ValidationRow) -> None:
    """Append ``row`` as one line; whole lines only, so a reader never sees half a row."""
    line = jsonsafe.dumps(dataclasses.asdict(row)) + "\n"
    with _LOCK:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()


def read_rows(path: Path) -> tuple[list[ValidationRow], list[str]]:
    """The latest row per instance in ``path``, and a note per line that could not be read (a
    line cut short by a crash, a row of an unknown shape)."""
    latest: dict[str, ValidationRow] = {}
    problems: list[str] = []
    names = {f.name for f in dataclasses.fields(ValidationRow)}
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return [], []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = jsonsafe.loads(line)
            if "category" not in data:  # written before rows said which of the three they are
                data["category"] = _category(data)
            row = ValidationRow(**{k: v for k, v in data.items() if k in names})
        except (ValueError, TypeError, AttributeError) as exc:
            problems.append(f"{path}:{n}: not a validation row ({exc})")
            continue
        latest[row.instance_id] = row
    return list(latest.values()), problems


def _category(data: dict[str, object]) -> str:
    if data.get("ok"):
        return "validated"
    return "infra_error" if "infra_error" in (data.get("gold"), data.get("empty")) else "failed"


def coverage(rows: Iterable[ValidationRow]) -> pd.DataFrame:
    """One row per repository (then "all"): rows, validated, share validated, infra_error and
    failed counts, and their causes ("cause ×n", the commonest first)."""
    by_repo: dict[str, list[ValidationRow]] = {}
    for row in rows:
        by_repo.setdefault(row.repo or "?", []).append(row)
    records = [_summary(repo, members) for repo, members in sorted(by_repo.items())]
    if len(records) > 1:
        everything = [r for members in by_repo.values() for r in members]
        records.append(_summary("all", everything))
    columns = ["repo", "rows", "validated", "share", "infra_error", "infra causes", "failed",
               "failure causes"]  # fmt: skip
    return pd.DataFrame.from_records(records, columns=columns)


def _summary(repo: str, rows: list[ValidationRow]) -> dict[str, object]:
    infra = Counter(r.cause for r in rows if r.category == "infra_error")
    failed = Counter(r.cause for r in rows if r.category == "failed")
    validated = sum(r.category == "validated" for r in rows)
    return {
        "repo": repo,
        "rows": len(rows),
        "validated": validated,
        "share": f"{validated / len(rows):.0%}" if rows else "-",
        "infra_error": sum(infra.values()),
        "infra causes": _causes(infra),
        "failed": sum(failed.values()),
        "failure causes": _causes(failed),
    }


def _causes(counts: Counter[str]) -> str:
    return ", ".join(f"{cause} ×{n}" for cause, n in counts.most_common()) or "-"


def format_coverage(table: pd.DataFrame) -> str:
    """The table as Markdown, as the README carries it."""
    if table.empty:
        return "no validation rows"
    header = "| " + " | ".join(table.columns) + " |"
    rule = "|" + "|".join("---" for _ in table.columns) + "|"
    body = ["| " + " | ".join(str(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join([header, rule, *body])
