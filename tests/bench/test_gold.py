import json
from collections import Counter
from pathlib import Path

import pytest

from pytest_toolpolicy.bench.gold import (
    GoldError,
    baseline_moves,
    hand_label,
    label_from,
    load_gold,
    selection_correct,
)
from pytest_toolpolicy.bench.gold_agreement import agreement
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


def test_a_label_round_trips_through_its_json_shape():
    label = load_gold("bundled__memstore-1")
    assert label_from(label.to_dict(), label.instance_id, "here") == label
    with pytest.raises(GoldError, match="here: instance_id is 'bundled__memstore-1'"):
        label_from(label.to_dict(), "other-1", "here")
    with pytest.raises(GoldError, match="here: a label is a JSON object, got list"):
        label_from([], "x-1", "here")


def test_hand_label_is_none_only_when_no_file_exists(tmp_path):
    assert hand_label("x-1", tmp_path) is None and hand_label("x-1", None) is None
    (tmp_path / "x-1").mkdir()
    (tmp_path / "x-1" / "gold.json").write_text("[")
    with pytest.raises(GoldError, match="x-1/gold.json"):
        hand_label("x-1", tmp_path)


def test_the_documented_agreement_of_derived_with_hand_written_labels_is_the_measured_one():
    """gold_labels/FORMAT.md states the figure; a change to the rules or the labels that moves
    it must update the page."""
    measured = agreement(load_instances("bundled").instances)
    assert measured.instances == 25
    page = (Path(__file__).parents[2] / "gold_labels" / "FORMAT.md").read_text(encoding="utf-8")
    for line in measured.lines()[1:5]:
        assert line in page, line
    assert len(measured.differing) == 3 * measured.instances - sum(measured.points_equal)
