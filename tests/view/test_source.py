"""The trajectory file is read in one streamed pass and each item read back by its offset."""

import json
from pathlib import Path

from pytest_toolpolicy.types import Outcome, Trajectory
from pytest_toolpolicy.view.source import TrajectoryIndex, trajectory_item


def _record(instance: str, variant: str, trial: int | None = None, text: str = "x") -> dict:
    """A trajectory's record: the viewer reads each line as every command reads one."""
    meta = {"trial": trial}
    trajectory = Trajectory(instance, "policy", variant, "m", (), Outcome("stop"), text, meta)
    return json.loads(json.dumps(trajectory.to_dict()))


def test_each_item_is_found_by_offset_and_read_back_whole(tmp_path: Path) -> None:
    records = [
        _record("a", "current"),
        _record("a", "policy", text="ü" * 1000),  # multibyte: offsets are bytes, not characters
        _record("b", "current", trial=2),
    ]
    path = tmp_path / "trajectories.jsonl"
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
    )
    index = TrajectoryIndex.scan(path)
    assert set(index.by_instance) == {"a", "b"}
    assert list(index.by_instance["a"]) == ["a-current", "a-policy"]
    assert index.read(index.by_instance["a"]["a-policy"]) == records[1]
    assert index.read(index.by_instance["b"]["b-current-t2"]) == records[2]
    assert index.by_instance["b"]["b-current-t2"].line == 3


def test_a_line_that_is_no_trajectory_is_noted_and_the_rest_kept(tmp_path: Path) -> None:
    path = tmp_path / "trajectories.jsonl"
    wrong = {**_record("b", "current"), "turns": {}}  # of the wrong shape: not read either
    lines = [json.dumps(_record("a", "current")), "{not json", "[]", json.dumps(wrong)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    index = TrajectoryIndex.scan(path)
    assert list(index.by_instance) == ["a"] and list(index.by_instance["a"]) == ["a-current"]
    assert index.skipped is not None
    assert [n for n, _ in index.skipped.lines] == [2, 3, 4]
    assert index.skipped.lines[2][1] == "turns is not a list but an object"


def test_a_missing_file_is_an_empty_index(tmp_path: Path) -> None:
    assert TrajectoryIndex.scan(tmp_path / "none.jsonl").by_instance == {}


def test_item_ids_are_the_sessions() -> None:
    from pytest_toolpolicy.decide.variants import ItemSpec

    spec = ItemSpec("x__y-1", "policy", gate="trust.lint", trial=3)
    record = {"instance_id": "x__y-1", "variant": spec.variant, "meta": {"trial": 3}}
    assert trajectory_item(record) == spec.id
