"""A dataset's environments, each built once: its real instances grouped by the environment
they need (repository, version, environment commit), and each group built as one row of
``toolpolicy envs build``'s table (``build_table.py``) — the environment once, then what each
member's base commit needs on top of it — with a line as it starts and one as it ends. The
stage that hands a run's items their environments (``stage.py``) builds through here too."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .build_table import BuildRow, disk_mib

if TYPE_CHECKING:
    from ..bench.instance import Instance
    from ..primitives.sandbox import Sandbox
    from .cache import Build

Key = tuple[str, str, str]  # (repo, version, environment commit)


@dataclass(frozen=True)
class GroupBuild:
    row: BuildRow
    name: str  # the environment's, "" where none was built
    # What ``build_environment`` gave each member (by instance id), or what it raised: an
    # ``EnvironmentSetupError`` not yet naming the member, a ``WorkspaceSetupError`` naming it.
    outcomes: dict[str, Build | Exception] = field(default_factory=dict)


def group_instances(instances: tuple[Instance, ...]) -> dict[Key, list[Instance]]:
    """Real instances by the environment they need: (repo, version, environment commit)."""
    groups: dict[Key, list[Instance]] = {}
    for instance in instances:
        if instance.path is None:
            commit = instance.environment_setup_commit or instance.base_commit
            groups.setdefault((instance.repo, instance.version, commit), []).append(instance)
    return groups


def build_groups(
    groups: dict[Key, list[Instance]],
    *,
    repos: Path | None,
    rebuild: bool,
    sandbox: Sandbox,
    say: Callable[[str], object],
) -> list[GroupBuild]:
    """Each group built in turn, ``say`` told a line as it starts and as it ends."""
    done = []
    for n, (key, members) in enumerate(groups.items(), 1):
        say(start_line(n, len(groups), key, members))
        group = build_group(key, members, repos=repos, rebuild=rebuild, sandbox=sandbox)
        say(end_line(key, members, group))
        done.append(group)
    return done


def start_line(n: int, total: int, key: Key, members: list[Instance]) -> str:
    return f"[{n}/{total}] {_what(key, members)} ..."


def end_line(key: Key, members: list[Instance], done: GroupBuild) -> str:
    row, what = done.row, _what(key, members)
    if row.status == "failed":
        return f"failed  {what} {row.seconds:.1f}s: {row.reason}"
    return f"{row.status:7} {what} {row.seconds:.1f}s  {done.name}"


def _what(key: Key, members: list[Instance]) -> str:
    repo, version, commit = key
    return f"{repo} {version} @ {commit[:12]} ({len(members)} instance(s))"


def build_group(
    key: Key,
    members: list[Instance],
    *,
    repos: Path | None,
    rebuild: bool,
    sandbox: Sandbox,
    sized: bool = True,
) -> GroupBuild:
    """Build (or find cached) the environment of ``members``: failed if any member's failed,
    built if any was built, else cached; the first reason, the seconds of all; with ``sized``,
    its size on disk (a walk of the whole venv, which only the table shows)."""
    from ..bench.workspaces import WorkspaceSetupError
    from .cache import build_environment
    from .spec import EnvironmentSetupError

    repo, version, commit = key
    statuses, seconds, name, reason = set(), 0.0, "", None
    python, home = "", None
    outcomes: dict[str, Build | Exception] = {}
    for member in members:
        try:
            build = build_environment(member, repos=repos, rebuild=rebuild, sandbox=sandbox)
        except (EnvironmentSetupError, WorkspaceSetupError) as exc:
            statuses.add("failed")
            reason = reason or str(exc)
            outcomes[member.instance_id] = exc
            continue
        outcomes[member.instance_id] = build
        statuses.add(build.status)
        seconds += build.seconds
        name = name or build.name
        reason = reason or build.reason
        python = python or build.spec.python
        if build.env is not None and build.env.home:
            home = Path(build.env.home)
        rebuild = False  # the environment once, not once per member
    status = "failed" if "failed" in statuses else "built" if "built" in statuses else "cached"
    why = first_line(reason) if status == "failed" else ""
    size = disk_mib(home) if home is not None and sized else None
    row = BuildRow(f"{repo} {version}", commit, len(members), status, seconds, python, size, why)
    return GroupBuild(row, name, outcomes)


def first_line(text: object, limit: int = 400) -> str:
    """A reason's first line: what failed and why (the output's tail follows it)."""
    line = next((line.strip() for line in str(text).splitlines() if line.strip()), "")
    return line if len(line) <= limit else line[: limit - 3] + "..."
