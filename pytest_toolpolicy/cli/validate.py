"""``toolpolicy validate --dataset D``: whether each instance's gold patch resolves it and no
patch does not. The instances' environments first, each built or found once as ``toolpolicy
envs build`` does it, with its lines (``envs/stage.py``; grading never builds one), then a
line per instance as it ends (each row recorded at once, for ``toolpolicy envs status``), then
the table and the coverage. Exit 1 when any instance failed or a record was malformed."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .. import jsonsafe
from .errors import UsageError
from .options import add_limits, positive_int, positive_number


def add_parser(sub: Any) -> None:
    val = sub.add_parser(
        "validate", help="check that each instance's gold patch resolves it and no patch does not"
    )
    val.add_argument(
        "--dataset", required=True, help="bundled[:DIR], a .jsonl/.json/.parquet, a hub id"
    )
    val.add_argument("--repos", help="directory of git mirrors, DIR/<owner>__<name>")
    val.add_argument("--ids", nargs="+", help="only these instance ids")
    val.add_argument("--jobs", type=positive_int, default=2, help="instances validated in parallel")
    val.add_argument("--timeout", type=positive_number, default=300.0, help="seconds per test run")
    val.add_argument(
        "--record",
        help="append each row, as it finishes, to this JSON Lines file "
        "(default: the cache's validation/rows.jsonl, which `toolpolicy envs status` reads)",
    )
    add_limits(val)
    val.set_defaults(func=_validate)


def _validate(ns: argparse.Namespace) -> int:
    from ..bench.dataset_input import dataset_note, load_dataset
    from ..envs.stage import resolve_environments
    from ..grading.coverage import coverage, format_coverage, record_row, validation_log
    from ..grading.validate import ValidationRow, format_table, validate
    from ..input_files import end_torn_line
    from ..primitives.sandbox import Sandbox, SandboxUnavailable
    from .envs import say_now
    from .inputs import check_env_specs, say

    check_env_specs()
    loaded = load_dataset(ns.dataset, ids=ns.ids)
    say("validate", dataset_note(ns.dataset, loaded.errors))
    try:
        sandbox = Sandbox.from_env()
    except SandboxUnavailable as exc:
        raise UsageError(str(exc)) from None
    repos = Path(ns.repos) if ns.repos else None
    log = Path(ns.record) if ns.record else validation_log()
    torn = end_torn_line(log)  # else the first row appended would join the torn line, and be lost
    if torn:
        say("validate", f"{log}:{torn}: cut short; the rows are recorded from the next line on")
    total = len(loaded.instances)
    done = [0]

    def finished(row: ValidationRow) -> None:
        record_row(log, row)  # kept whatever happens to the rest of the run
        done[0] += 1
        mark = "ok" if row.ok else f"{row.category}: {row.cause}"
        print(f"[{done[0]}/{total}] {row.instance_id} {row.seconds:.0f}s {mark}", flush=True)

    environments = resolve_environments(loaded.instances, repos=repos, sandbox=sandbox, say=say_now)
    rows = validate(
        loaded.instances,
        sandbox=sandbox,
        jobs=ns.jobs,
        repos=repos,
        timeout=ns.timeout,
        on_row=finished,
        environments=environments,
    )
    print(jsonsafe.escape(format_table(rows, loaded.errors)))
    print(f"\ncoverage (rows recorded in {log}):")
    print(jsonsafe.escape(format_coverage(coverage(rows))))
    return 1 if loaded.errors or not all(row.ok for row in rows) else 0
