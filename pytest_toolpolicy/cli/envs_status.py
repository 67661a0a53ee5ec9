"""``toolpolicy envs status``: per repository, the environments the cache holds (built, failed)
and the coverage the recorded validation rows show (``envs/status.py`` counts them)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_parser(actions: Any) -> None:
    status = actions.add_parser(
        "status", help="per repository: environments built or failed, and validation coverage"
    )
    status.add_argument(
        "--record", help="validation rows to read (default: the cache's validation/rows.jsonl)"
    )
    status.set_defaults(func=_status)


def _status(ns: argparse.Namespace) -> int:
    from .. import jsonsafe
    from ..envs.cache import envs_root, list_environments
    from ..envs.status import environment_counts
    from ..grading.coverage import coverage, format_coverage, validation_log
    from ..grading.validation_rows import recorded_rows
    from .inputs import say_skipped

    envs = environment_counts(list_environments())
    print(f"environments in {envs_root()}:")
    for repo, n in sorted(envs.items()):
        print(f"  {repo}: {n['built']} built, {n['failed']} failed")
    if not envs:
        print("  none")
    log = Path(ns.record) if ns.record else validation_log()
    rows, skipped = recorded_rows(log)
    print(f"\nvalidation coverage ({len(rows)} instance(s) recorded in {log}):")
    print(jsonsafe.escape(format_coverage(coverage(rows))))
    say_skipped("envs status", skipped)
    return 0
