"""``toolpolicy envs status``: what this machine can judge, per repository — the environments
the cache holds (built, failed) and the coverage the recorded validation rows show (rows,
validated, infra errors and failures by cause; ``grading/coverage.py``)."""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import Any


def add_status(actions: Any) -> None:
    status = actions.add_parser(
        "status", help="per repository: environments built or failed, and validation coverage"
    )
    status.add_argument(
        "--record", help="validation rows to read (default: the cache's validation/rows.jsonl)"
    )
    status.set_defaults(func=_status)


def environment_counts(rows: list[dict[str, Any]]) -> dict[str, Counter[str]]:
    """Per repository, how many cached environments are built and how many failed."""
    counts: dict[str, Counter[str]] = {}
    for row in rows:
        spec = row.get("spec")
        # A built record names its repository; a failure's "spec" is "owner/name version".
        repo = row.get("repo") or (spec.split()[0] if isinstance(spec, str) and spec else "?")
        counts.setdefault(str(repo), Counter())[row["status"]] += 1
    return counts


def _status(ns: argparse.Namespace) -> int:
    from .. import jsonsafe
    from ..grading.coverage import coverage, format_coverage, read_rows, validation_log
    from .cache import envs_root, list_environments

    envs = environment_counts(list_environments())
    print(f"environments in {envs_root()}:")
    for repo, n in sorted(envs.items()):
        print(f"  {repo}: {n['built']} built, {n['failed']} failed")
    if not envs:
        print("  none")
    log = Path(ns.record) if ns.record else validation_log()
    rows, problems = read_rows(log)
    print(f"\nvalidation coverage ({len(rows)} instance(s) recorded in {log}):")
    print(jsonsafe.escape(format_coverage(coverage(rows))))
    for problem in problems:
        print(f"unreadable: {problem}")
    return 0
