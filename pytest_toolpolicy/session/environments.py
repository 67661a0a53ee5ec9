"""The A/B session's environment stage (``envs/stage.py``): the distinct environments of the
items this session runs, resolved once before the first of them, each item then handed its own
(``Harness.environments``); preparing or grading an item never builds one.

Where and when:

- a serial session: when collection ends (after ``-k`` and ``-m``), with a line per environment
  as it starts and as it ends;
- under xdist, the controller: when the first worker's collection arrives, before any item is
  scheduled, with the same lines; the workers sharing its disk then find every environment
  built;
- each xdist worker, before its first item: its own items' environments, found where the
  controller built them, or built here on a machine that shares no disk with it (``--tx
  socket=``/``ssh=``); a worker's lines would reach no terminal, so it prints none.

Items finished by an earlier session (``--toolpolicy-resume``) are not run, and need none.
Bundled instances need none either: the stage costs them nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import pytest

from ..decide.variants import ItemSpec
from ..envs.stage import Resolved, resolve_environments

if TYPE_CHECKING:
    from .session import ABSession

ITEM_PARAM = "toolpolicy_item"
PREFIX = "toolpolicy environment: "


def item_specs(items: Iterable[pytest.Item]) -> list[ItemSpec]:
    """The A/B items among collected ``items`` (their ``toolpolicy_item`` parameter)."""
    specs = []
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if isinstance(spec := params.get(ITEM_PARAM), ItemSpec):
            specs.append(spec)
    return specs


def node_specs(ids: Iterable[str], specs: Sequence[ItemSpec]) -> list[ItemSpec]:
    """The items among collected node ``ids`` (a worker's, on the controller): the parameter id
    is an item's id, or holds one (a project's own test may add parameters around it)."""
    by_id = {spec.id: spec for spec in specs}
    found = []
    for node in ids:
        param = node.partition("[")[2].removesuffix("]")
        spec = by_id.get(param)
        if spec is None and param:
            held = [i for i in by_id if i in param]
            spec = by_id[max(held, key=len)] if held else None
        if spec is not None:
            found.append(spec)
    return found


def resolve(
    session: ABSession, specs: Iterable[ItemSpec], say: Callable[[str], object] | None
) -> dict[str, Resolved]:
    """The environments of the instances of ``specs`` that will run."""
    from .item_run import finished

    wanted = {
        spec.instance_id
        for spec in specs
        if not (session.settings.resume and finished(session, spec.id) is not None)
    }
    instances = [i for i in session.loaded().instances if i.instance_id in wanted]
    return resolve_environments(
        instances, repos=session.settings.repos, sandbox=session.sandbox(), say=say
    )


def terminal_lines(config: pytest.Config) -> Callable[[str], object] | None:
    """Where the controller's lines go: its terminal, unless progress is off (``-qq``)."""
    from .progress import level_for

    reporter: Any = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or level_for(config.option.verbose) == "off":
        return None

    def say(line: str) -> None:
        reporter.write_line(PREFIX + line)
        reporter.flush()  # a build takes minutes: its line shows as it starts

    return say
