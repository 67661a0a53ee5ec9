"""``toolpolicy envs build`` and ``toolpolicy envs list``: environments ahead of a run.

``build`` loads the dataset as every other command does, groups its real instances by the
environment they need (repo, version, environment commit), and builds each once
(``envs/build_groups.py``), printing a line per environment as it starts and one as it ends:
built, cached or failed, the seconds it took, and why it failed (the lines an A/B session and
``toolpolicy validate`` print for their environment stage, ``envs/stage.py``). Exit 0 when every one is there, 1 when any
failed (a broken dataset row counts too), 2 for a dataset that cannot be read. ``list`` shows
what the cache holds; ``status`` what it holds per repository, beside the coverage recorded
validation runs measured (``envs_status.py``); ``resolve`` whether the specs' pins resolve here
(``envs_resolve.py``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from . import envs_resolve, envs_status
from .errors import UsageError


def add_parser(sub: Any) -> None:
    """Register ``envs`` on the ``toolpolicy`` subcommand parsers ``sub``."""
    envs = sub.add_parser("envs", help="build ahead of a run, or list, the test environments")
    actions = envs.add_subparsers(dest="envs_command", required=True)
    build = actions.add_parser("build", help="build the environments a dataset's instances need")
    build.add_argument(
        "--dataset", required=True, help="bundled[:DIR], a .jsonl/.json/.parquet, a hub id"
    )
    build.add_argument("--repos", help="directory of git mirrors, DIR/<owner>__<name>")
    build.add_argument("--ids", nargs="+", help="only these instance ids")
    build.add_argument("--sample", type=_positive, help="a seeded sample of this many instances")
    build.add_argument("--seed", type=int, default=0, help="the sample's seed (default 0)")
    build.add_argument(
        "--strata",
        choices=("repo", "none"),
        default="repo",
        help="how the sample is drawn: an equal share per repository (default) or none",
    )
    build.add_argument(
        "--rebuild", action="store_true", help="rebuild even what is cached or remembered failed"
    )
    build.set_defaults(func=_build)
    listing = actions.add_parser("list", help="the environments in the cache")
    listing.set_defaults(func=_list)
    envs_status.add_parser(actions)
    envs_resolve.add_parser(actions)


def _positive(text: str) -> int:
    value = int(text) if text.isdigit() else 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def _build(ns: argparse.Namespace) -> int:
    from ..bench.dataset_input import dataset_note, load_dataset
    from ..envs.build_groups import build_groups, group_instances
    from ..envs.build_table import format_rows
    from ..envs.eligible import runnable_here
    from ..primitives.sandbox import Sandbox, SandboxUnavailable
    from .inputs import check_env_specs, say

    check_env_specs()
    # The A/B's exclusion, so a seeded sample here is the one the A/B will draw.
    exclude = runnable_here(Path(ns.repos) if ns.repos else None)
    loaded = load_dataset(
        ns.dataset, ids=ns.ids, sample=ns.sample, seed=ns.seed, exclude=exclude, strata=ns.strata
    )
    say("envs build", dataset_note(ns.dataset, loaded.errors))
    try:
        sandbox = Sandbox.from_env()
    except SandboxUnavailable as exc:
        raise UsageError(str(exc)) from None
    for error in loaded.errors:
        print(f"skipped: {error}")
    for note in loaded.notes:
        print(note)
    groups = group_instances(loaded.instances)
    bundled = len(loaded.instances) - sum(len(g) for g in groups.values())
    print(
        f"{len(groups)} environment(s) for {len(loaded.instances) - bundled} instance(s)"
        + (f"; {bundled} bundled instance(s) need none" if bundled else "")
        + f"; sandbox: {sandbox.mode}",
        flush=True,
    )
    repos = Path(ns.repos) if ns.repos else None
    built = build_groups(groups, repos=repos, rebuild=ns.rebuild, sandbox=sandbox, say=say_now)
    rows = [done.row for done in built]
    failed = sum(r.status == "failed" for r in rows)
    print()
    print(format_rows(rows))
    return 1 if failed or loaded.errors else 0


def say_now(line: str) -> None:
    """A progress line, out at once."""
    print(line, flush=True)


def _list(ns: argparse.Namespace) -> int:
    from ..envs.build_groups import first_line
    from ..envs.cache import envs_root, list_environments
    from ..envs.records import read_json
    from .inputs import say

    rows = list_environments()
    # What list_environments passed over: a record cut short or not an object (it reads each
    # with read_json, as here).
    root = envs_root()
    unread = (
        [p for p in sorted(root.glob("*.json")) if read_json(p) is None] if root.is_dir() else []
    )
    if unread:
        say(
            "envs list",
            f"{unread[0]}: not a readable JSON object ({len(unread)} record(s) skipped)",
        )
    if not rows:
        print(f"no environments in {envs_root()}")
        return 0
    print(f"{len(rows)} environment(s) in {envs_root()}")
    for row in rows:
        python = row.get("python_version") or "?"
        when = row.get("built_at") or row.get("time") or "?"
        took = f" {row['build_s']:.0f}s" if isinstance(row.get("build_s"), int | float) else ""
        line = f"{row['status']:7} {row['name']}  python {python}  {when}{took}"
        if row["status"] == "failed":
            line += f"  {first_line(row.get('error'))}"
        print(line)
    return 0
