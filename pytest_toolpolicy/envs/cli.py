"""``toolpolicy envs build`` and ``toolpolicy envs list``: environments ahead of a run.

``build`` loads the dataset as every other command does, groups its real instances by the
environment they need (repo, version, environment commit), and builds each once, printing one
line per environment as it ends: built, cached or failed, the seconds it took, and why it
failed. Exit 0 when every one is there, 1 when any failed (a broken dataset row counts too),
2 for a dataset that cannot be read. ``list`` shows what the cache holds; ``status`` what it
holds per repository, beside the coverage recorded validation runs measured (``status.py``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .build_table import BuildRow, disk_mib, format_rows
from .resolve import add_resolve
from .status import add_status

if TYPE_CHECKING:
    from ..bench.instance import Instance


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
    add_status(actions)
    add_resolve(actions)


def _positive(text: str) -> int:
    value = int(text) if text.isdigit() else 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def _build(ns: argparse.Namespace) -> int:
    from ..bench.eligible import runnable_here
    from ..bench.workspaces import WorkspaceSetupError
    from ..cli import UsageError
    from ..cli_inputs import check_env_specs, dataset_note, load_dataset, say
    from ..primitives.sandbox import Sandbox, SandboxUnavailable
    from .cache import build_environment
    from .spec import EnvironmentSetupError

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
    rows: list[BuildRow] = []
    for n, ((repo, version, commit), members) in enumerate(groups.items(), 1):
        what = f"{repo} {version} @ {commit[:12]} ({len(members)} instance(s))"
        print(f"[{n}/{len(groups)}] {what} ...", flush=True)
        # Each member: the environment once, then what each base commit needs on top of it.
        statuses, seconds, name, reason = set(), 0.0, "", None
        python, home = "", None
        rebuild = ns.rebuild
        for member in members:
            try:
                build = build_environment(member, repos=repos, rebuild=rebuild, sandbox=sandbox)
            except (EnvironmentSetupError, WorkspaceSetupError) as exc:
                statuses.add("failed")
                reason = reason or str(exc)
                continue
            statuses.add(build.status)
            seconds += build.seconds
            name = name or build.name
            reason = reason or build.reason
            python = python or build.spec.python
            if build.env is not None and build.env.home:
                home = Path(build.env.home)
            rebuild = False  # the environment once, not once per member
        status = "failed" if "failed" in statuses else "built" if "built" in statuses else "cached"
        why = _one_line(reason) if status == "failed" else ""
        if status == "failed":
            print(f"failed  {what} {seconds:.1f}s: {why}", flush=True)
        else:
            print(f"{status:7} {what} {seconds:.1f}s  {name}", flush=True)
        size = disk_mib(home) if home is not None else None
        rows.append(
            BuildRow(f"{repo} {version}", commit, len(members), status, seconds, python, size, why)
        )
    failed = sum(r.status == "failed" for r in rows)
    print()
    print(format_rows(rows))
    return 1 if failed or loaded.errors else 0


def group_instances(instances: tuple[Instance, ...]) -> dict[tuple[str, str, str], list[Instance]]:
    """Real instances by the environment they need: (repo, version, environment commit)."""
    groups: dict[tuple[str, str, str], list[Instance]] = {}
    for instance in instances:
        if instance.path is None:
            commit = instance.environment_setup_commit or instance.base_commit
            groups.setdefault((instance.repo, instance.version, commit), []).append(instance)
    return groups


def _list(ns: argparse.Namespace) -> int:
    from ..cli_inputs import say
    from .cache import envs_root, list_environments
    from .records import read_json

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
            line += f"  {_one_line(row.get('error'))}"
        print(line)
    return 0


def _one_line(text: object, limit: int = 400) -> str:
    """A reason's first line: what failed and why (the output's tail follows it)."""
    line = next((line.strip() for line in str(text).splitlines() if line.strip()), "")
    return line if len(line) <= limit else line[: limit - 3] + "..."
