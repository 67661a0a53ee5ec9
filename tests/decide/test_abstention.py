"""Abstention both ways, one definition for both arms: correct on under-specified instances,
false on resolvable ones. A degenerate model that always asks (the 270M base model did, copying
the prompt's example) and a baseline that submits an empty patch at once must show it."""

from __future__ import annotations

import pandas as pd

from pytest_toolpolicy.decide.render import render_text
from pytest_toolpolicy.decide.results import results_frame
from pytest_toolpolicy.decide.table import decision_table
from pytest_toolpolicy.run.row import row_of, spec_of

from ..run.trajectories import always_asks, submits_empty

RESOLVABLE = ["repo__m-1", "repo__m-2", "repo__m-3"]
UNDER = ["repo__m-4"]


def _results(degenerate) -> pd.DataFrame:
    runs = [degenerate(i, underspecified=False) for i in RESOLVABLE]
    runs += [degenerate(i, underspecified=True) for i in UNDER]
    return results_frame(row_of(t, spec_of(t), None) for t in runs)


def test_an_always_ask_policy_abstains_falsely_on_every_resolvable_instance() -> None:
    results = _results(always_asks)
    assert results["abstained"].all()
    r = decision_table(results).loc["policy"]
    assert (r["abstained_correct"], r["underspecified"], r["abstention"]) == (1, 1, 1.0)
    assert (r["abstained_false"], r["resolvable"], r["false_abstention"]) == (3, 3, 1.0)


def test_an_empty_submit_baseline_abstains_falsely_alike() -> None:
    results = _results(submits_empty)
    r = decision_table(results).loc["current"]
    assert (r["abstention"], r["false_abstention"]) == (1.0, 1.0)
    assert (r["abstained_false"], r["resolvable"]) == (3, 3)


def test_both_ways_side_by_side_in_the_table() -> None:
    results = pd.concat([_results(always_asks), _results(submits_empty)], ignore_index=True)
    table = decision_table(results)
    text = render_text(table, {"model": "scripted", "dataset": "hand-built"})
    header = next(line for line in text.splitlines() if line.startswith("arm/variant"))
    assert header.split()[-2:] == ["abstain", "false-abst"]
    current = next(line for line in text.splitlines() if line.startswith("current "))
    policy = next(line for line in text.splitlines() if line.startswith("policy "))
    for line in (current, policy):
        assert line.split()[-4:] == ["1.000", "(1/1)", "1.000", "(3/3)"]
