"""The environments of a run's instances, resolved once and ahead of them: the stage between
the instances and their items (an A/B session's, ``toolpolicy run``'s, ``toolpolicy
validate``'s). Preparing, running or grading an item is handed what comes out of it and never
builds.

The real instances are grouped by the environment they need and each group is built or found as
``toolpolicy envs build`` does it (``build_groups.py``), with a line as it starts and one as it
ends. What comes out, per instance, is its ready ``Environment`` or ``Unavailable``: the error
getting it raised, raised again where the instance's run or grading meets it, so an item reports
what it reported when it built its own. Bundled instances need nothing here: they run on the
harness's interpreter, with no line and no time spent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from .build_groups import (
    GroupBuild,
    Key,
    build_group,
    end_line,
    first_line,
    group_instances,
    start_line,
)
from .build_table import BuildRow
from .cache import Build, named, ready
from .environment import Environment
from .spec import EnvironmentSetupError

if TYPE_CHECKING:
    from ..bench.instance import Instance
    from ..primitives.sandbox import Sandbox


@dataclass(frozen=True)
class Unavailable:
    """Why an instance's environment could not be had: the error resolving it raised, naming
    the instance as ``cache.environment_for`` names it."""

    error: Exception

    def __str__(self) -> str:
        return str(self.error)

    def raise_error(self) -> NoReturn:
        # One error, raised again for each of the instance's items: none carries another's
        # traceback.
        raise self.error.with_traceback(None)


Resolved = Environment | Unavailable


def resolve_environments(
    instances: Iterable[Instance],
    *,
    repos: Path | None,
    sandbox: Sandbox,
    say: Callable[[str], object] | None = None,
) -> dict[str, Resolved]:
    """Each real instance's environment (or why there is none), by instance id; ``say`` is
    told a line as each environment starts and one as it ends."""
    groups = group_instances(tuple(instances))
    resolved: dict[str, Resolved] = {}
    for n, (key, members) in enumerate(groups.items(), 1):
        if say is not None:
            say(start_line(n, len(groups), key, members))
        try:
            group = build_group(
                key, members, repos=repos, rebuild=False, sandbox=sandbox, sized=False
            )
        except Exception as exc:  # a harness fault: each member's items fail with it, as before
            group = _faulted(key, members, exc)
        if say is not None:
            say(end_line(key, members, group))
        for member in members:
            resolved[member.instance_id] = _resolved(member, group.outcomes[member.instance_id])
    return resolved


def _resolved(member: Instance, outcome: Build | Exception) -> Resolved:
    if isinstance(outcome, EnvironmentSetupError):  # a spec file or an interpreter
        return Unavailable(named(member, outcome))
    if isinstance(outcome, Exception):  # its checkout (naming it), or a harness fault
        return Unavailable(outcome)
    try:
        return ready(member, outcome)
    except Exception as exc:
        return Unavailable(exc)


def _faulted(key: Key, members: list[Instance], exc: Exception) -> GroupBuild:
    repo, version, commit = key
    reason = first_line(f"{type(exc).__name__}: {exc}")
    row = BuildRow(f"{repo} {version}", commit, len(members), "failed", 0.0, reason=reason)
    return GroupBuild(row, "", {member.instance_id: exc for member in members})
