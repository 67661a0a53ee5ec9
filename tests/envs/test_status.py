"""``toolpolicy envs status``: the cache's environments per repository beside recorded coverage."""

from __future__ import annotations

from pytest_toolpolicy.envs.status import environment_counts


def test_counts_built_and_failed_per_repository() -> None:
    rows = [
        {"status": "built", "repo": "o/a", "name": "a1"},
        {"status": "built", "repo": "o/a", "name": "a2"},
        {"status": "failed", "spec": "o/a 1.0", "error": "x", "name": "a3"},
        {"status": "failed", "spec": "", "error": "x", "name": "z"},
    ]
    counts = environment_counts(rows)
    assert {k: dict(v) for k, v in counts.items()} == {
        "o/a": {"built": 2, "failed": 1},
        "?": {"failed": 1},
    }
