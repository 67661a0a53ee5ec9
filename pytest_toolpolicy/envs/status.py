"""What ``toolpolicy envs status`` shows of the environments (``cli/envs_status.py``): per
repository, the environments the cache holds, built and failed. The coverage the recorded
validation rows show is grading's (``grading/validation_rows.py``, ``grading/coverage.py``)."""

from __future__ import annotations

from collections import Counter
from typing import Any


def environment_counts(rows: list[dict[str, Any]]) -> dict[str, Counter[str]]:
    """Per repository, how many cached environments are built and how many failed."""
    counts: dict[str, Counter[str]] = {}
    for row in rows:
        spec = row.get("spec")
        # A built record names its repository; a failure's "spec" is "owner/name version".
        repo = row.get("repo") or (spec.split()[0] if isinstance(spec, str) and spec else "?")
        counts.setdefault(str(repo), Counter())[row["status"]] += 1
    return counts
