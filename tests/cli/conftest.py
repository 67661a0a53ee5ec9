"""The dataset every command given one reads (``SAMPLE``), and one with malformed records."""

import json
from pathlib import Path

import pytest

from ..malformed import write_malformed

SAMPLE = Path(__file__).parents[1] / "data" / "swebench" / "verified_full_sample.jsonl"


@pytest.fixture
def malformed_dataset(tmp_path: Path) -> tuple[Path, str]:
    """SWE-bench rows: two good, psf__requests-1142 with a FAIL_TO_PASS of the wrong type on
    line 2, a torn last line. The torn line's number."""
    flask, requests, other = (json.loads(line) for line in SAMPLE.read_text().splitlines())
    data = tmp_path / "rows.jsonl"
    return data, write_malformed(data, [flask, other], {**requests, "FAIL_TO_PASS": 5})
