"""Why ``sim``'s ``trust: unverified`` observations come from the tool layer, not searches.

The round-trip check flags a ``search_symbol`` match whose ``selector + signature`` lacks the
query's last dotted part (case-insensitively). Every tier of ``search_symbol`` returns selectors
holding the query (a query never matches across two selectors: ``tests/primitives``), so a loose
name a model might search for (a plural, a case change, a misspelling, a shortened name) finds
nothing or matches that pass: a search fault of the simulator could never show the gate firing.
The simulator's caveats come from ``flaky_tool`` instead (``test_sim_tool_faults.py``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_toolpolicy.bench import load_instances
from pytest_toolpolicy.bench.workspaces import materialize
from pytest_toolpolicy.models.sim.base_tree import workspace_tree
from pytest_toolpolicy.models.sim.plan import gold_edits
from pytest_toolpolicy.policy.config import PolicyConfig
from pytest_toolpolicy.policy.trust import trust_gate
from pytest_toolpolicy.primitives.toolbox import Toolbox
from pytest_toolpolicy.types import ToolCall

RESOLVABLE = [i for i in load_instances("bundled").instances if i.patch and not i.underspecified]


def loose_names(selector: str) -> set[str]:
    """What a model might search for instead of the selector it means."""
    parts = selector.split(".")
    name = parts[-1]
    return {
        name + "s",  # plural
        name.upper(),
        name.capitalize(),
        name[:-1] + ("x" if name[-1] != "x" else "y"),  # misspelt
        name[1:],
        name[: max(1, len(name) // 2)],  # the start of it
        name.replace("_", ""),
        name.replace("_", " "),  # a paraphrase in words
        ".".join(parts[-2:]),
        f"{parts[0]}.{name}",  # a shorter import path
    }


@pytest.mark.parametrize("instance", RESOLVABLE, ids=lambda i: i.instance_id)
def test_loose_searches_never_fail_the_round_trip_check(instance, tmp_path: Path) -> None:
    workspace = materialize(instance, tmp_path)
    box = Toolbox(workspace.root)
    config = PolicyConfig()
    found = 0
    for edit in gold_edits(workspace_tree(workspace), instance.patch, True):
        for query in sorted(loose_names(edit.selector)):
            call = ToolCall("search_symbol", {"query": query})
            envelope = box.call("search_symbol", call.args)
            assert envelope["ok"], (query, envelope)
            found += bool(envelope["data"]["matches"])
            verdict = trust_gate(call, envelope, config)
            assert verdict.trusted, (query, verdict.caveat)
    assert found  # some loose names did return matches, and the check inspected them
