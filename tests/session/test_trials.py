"""Repeated trials (``--toolpolicy-trials K``): the option, the items, a seed a trial for sim and
a cache key a trial for real models, and what the table reports: pass^k and each measure's
spread over the trials, with every trial a pair in the paired statistics."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_toolpolicy.bench import load_instances
from pytest_toolpolicy.decide.table import decision_table
from pytest_toolpolicy.decide.variants import ItemSpec
from pytest_toolpolicy.models.base import ModelRequest
from pytest_toolpolicy.models.cache import request_key
from pytest_toolpolicy.session.harness import model_factory
from pytest_toolpolicy.session.settings import SettingsError, settings_from

from ..decide.results_factory import frame, item


def _settings(**options):
    return settings_from({"toolpolicy": "ab", **options}.get, {})


def test_the_option_and_its_bounds() -> None:
    settings = _settings(toolpolicy_trials="3")
    assert settings.trials == 3
    assert settings.report == Path("reports/sim-bundled-seed0-k3")
    assert _settings().trials == 1
    for bad, message in (("0", "positive integer"), ("x", "integer"), ("101", "at most 100")):
        with pytest.raises(SettingsError, match=message):
            _settings(toolpolicy_trials=bad)


def test_item_ids_carry_the_trial_only_when_there_are_several() -> None:
    assert ItemSpec("i-1", "policy").id == "i-1-policy"
    assert ItemSpec("i-1", "policy", trial=2).id == "i-1-policy-t2"
    assert ItemSpec("i-1", "policy", candidate="issue-first", trial=1).id == (
        "i-1-cand:issue-first-t1"
    )


def test_sim_takes_a_seed_a_trial_a_real_model_one_client() -> None:
    instances = {i.instance_id: i for i in load_instances("bundled", sample=1).instances}
    make = model_factory(_settings(toolpolicy_seed="5"), instances)
    assert [make(t).seed for t in (1, 2, 3)] == [5, 6, 7]


def test_a_trial_past_the_first_has_a_cache_key_of_its_own() -> None:
    request = ModelRequest(messages=({"role": "user", "content": "hi"},))
    first = request_key("m", request)[0]
    assert request_key("m", ModelRequest(messages=request.messages, trial=1))[0] == first
    second = request_key("m", ModelRequest(messages=request.messages, trial=2))[0]
    assert second != first
    assert "trial" not in ModelRequest(messages=request.messages, trial=2).params()  # never sent


def _trial_rows(variant: str, outcomes: dict[str, list[bool]], **fields):
    return [
        item(instance_id=iid, variant=variant, trial=t, resolved=r, **fields)
        for iid, results in outcomes.items()
        for t, r in enumerate(results, 1)
    ]


def test_pass_k_and_the_spread_over_trials() -> None:
    rows = _trial_rows("current", {"i-1": [True, True, True], "i-2": [False, False, False]})
    # i-1 always, i-2 in one trial of three: pass^3 counts only i-1.
    rows += _trial_rows("policy", {"i-1": [True, True, True], "i-2": [True, False, False]})
    table = decision_table(frame(rows))
    policy, current = table.loc["policy"], table.loc["current"]
    assert (policy["trials"], policy["instances"], policy["passed_all"]) == (3, 2, 1)
    assert policy["pass_k"] == 0.5 and current["pass_k"] == 0.5
    assert (policy["n"], policy["resolved"]) == (6, 4)  # every trial an item
    # Resolve by trial: 1.0, 0.5, 0.5 -> sample sd 0.2887; current: 0.5 each time -> 0.
    assert policy["sd_resolve"] == pytest.approx(0.288675, abs=1e-6)
    assert current["sd_resolve"] == 0.0
    # Every trial is a pair: 6 pairs, one discordant (i-2's first trial), intervals over
    # whole instances.
    assert (policy["n_pairs"], policy["mcnemar_b"], policy["mcnemar_c"]) == (6, 0, 1)
    assert policy["ci_clustered_by"] == "instance"


def test_one_trial_reports_no_spread() -> None:
    table = decision_table(frame([item(variant="current"), item(variant="policy")]))
    assert table.loc["policy", "trials"] == 1
    assert table.loc["policy", ["pass_k", "sd_resolve", "sd_cost"]].isna().all()
