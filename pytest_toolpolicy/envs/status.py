"""``toolpolicy envs status``: what this machine can judge, per repository — the environments
the cache holds (built, failed) and the coverage the recorded validation rows show (rows,
validated, infra errors and failures by cause; ``grading/coverage.py``)."""

from __future__ import annotations

import argparse
import dataclasses
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..grading.validate import ValidationRow


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


def validation_row(data: Any) -> ValidationRow:
    """A recorded validation row (``grading/coverage.record_row`` writes them), its fields
    checked: ``RecordError`` for one of the wrong type, which the coverage would trip on."""
    from ..grading.validate import ValidationRow
    from ..input_files import RecordError

    if not isinstance(data, dict):
        raise RecordError("not a validation row (not a JSON object)")
    if "category" not in data:  # written before rows said which of the three they are
        failed = (
            "infra_error" if "infra_error" in (data.get("gold"), data.get("empty")) else "failed"
        )
        data = {**data, "category": "validated" if data.get("ok") is True else failed}
    kinds = {f.name: f.type for f in dataclasses.fields(ValidationRow)}
    known = {k: v for k, v in data.items() if k in kinds}
    for name, value in known.items():
        wanted = _KINDS.get(str(kinds[name]), (str,))
        if not isinstance(value, wanted) or (isinstance(value, bool) and bool not in wanted):
            raise RecordError(
                f"not a validation row ({name} is {type(value).__name__}, not {kinds[name]})"
            )
    try:
        return ValidationRow(**known)
    except TypeError as exc:  # a field missing
        raise RecordError(f"not a validation row ({exc})") from None


# The types of ValidationRow's fields, as dataclasses.fields gives them (as strings).
_KINDS: dict[str, tuple[type, ...]] = {"bool": (bool,), "float": (int, float)}


def _status(ns: argparse.Namespace) -> int:
    from .. import jsonsafe
    from ..cli_inputs import say_skipped
    from ..grading.coverage import coverage, format_coverage, validation_log
    from ..input_files import read_jsonl
    from .cache import envs_root, list_environments

    envs = environment_counts(list_environments())
    print(f"environments in {envs_root()}:")
    for repo, n in sorted(envs.items()):
        print(f"  {repo}: {n['built']} built, {n['failed']} failed")
    if not envs:
        print("  none")
    log = Path(ns.record) if ns.record else validation_log()
    recorded, skipped = read_jsonl(log, validation_row)
    rows = list({row.instance_id: row for row in recorded}.values())  # the latest per instance
    print(f"\nvalidation coverage ({len(rows)} instance(s) recorded in {log}):")
    print(jsonsafe.escape(format_coverage(coverage(rows))))
    say_skipped("envs status", skipped)
    return 0
