import json
from collections import Counter

import pytest

from pytest_toolpolicy.bench.gold import (
    GoldError,
    baseline_moves,
    load_gold,
    selection_correct,
)
from pytest_toolpolicy.bench.load import load_instances


def test_every_bundled_instance_has_a_consistent_gold_label():
    result = load_instances("bundled")
    assert result.errors == ()
    instances = result.instances
    assert len(instances) >= 24
    assert len({i.repo for i in instances}) >= 5
    assert sum(i.underspecified for i in instances) >= 4
    outcomes = Counter()
    for instance in instances:
        label = load_gold(instance.instance_id)
        assert len(label.decisions) == 3
        assert label.outcome == ("ask_user" if instance.underspecified else "stop")
        outcomes[label.outcome] += 1
    assert outcomes["ask_user"] == sum(i.underspecified for i in instances)


@pytest.mark.parametrize(
    ("tool", "args", "moves"),
    [
        ("read_file", {"path": "a.py"}, {"read_entity"}),
        ("edit_file", {"path": "a.py"}, {"edit_entity"}),
        ("write_file", {"path": "a.py"}, {"edit_entity"}),
        ("bash", {"command": "python -m pytest tests/test_a.py -q"}, {"run_test"}),
        ("bash", {"command": "cd repo && pytest -x"}, {"run_test"}),
        ("bash", {"command": "grep -rn 'def recall' ."}, {"search_symbol", "search_code"}),
        ("bash", {"command": "git grep recall"}, {"search_symbol", "search_code"}),
        ("bash", {"command": "sed -n '1,40p' memstore/__init__.py"}, {"read_entity"}),
        ("bash", {"command": "cat memstore/__init__.py"}, {"read_entity"}),
        ("bash", {"command": "python -c 'print(1)'"}, {"execute"}),
        ("bash", {"command": "echo 'unbalanced"}, {"execute"}),
        ("stop", {}, {"stop"}),
    ],
)
def test_baseline_calls_map_to_policy_moves(tool, args, moves):
    assert baseline_moves(tool, args) == frozenset(moves)


def test_submit_is_stop_or_abstention():
    assert baseline_moves("submit", {"message": "fixed"}) == frozenset({"stop"})
    assert baseline_moves("submit", {"message": "which one?"}, changed=False) == frozenset(
        {"ask_user"}
    )


def test_selection_scoring():
    assert selection_correct(
        frozenset({"search_symbol", "search_code"}), frozenset({"search_code"})
    )
    assert not selection_correct(frozenset({"execute"}), frozenset({"read_entity"}))


def test_a_bad_label_is_a_specific_error(tmp_path):
    (tmp_path / "x-1").mkdir()
    (tmp_path / "x-1" / "gold.json").write_text(
        json.dumps({"instance_id": "x-1", "decisions": [["bash"]], "outcome": "stop"})
    )
    with pytest.raises(GoldError, match="decisions must be"):
        load_gold("x-1", tmp_path)
    with pytest.raises(GoldError, match="x-2/gold.json"):
        load_gold("x-2", tmp_path)
