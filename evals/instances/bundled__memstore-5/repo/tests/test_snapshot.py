import json

import pytest

from memstore import ManualClock, MemStore, SnapshotError


def test_round_trip_plain_values():
    store = MemStore()
    store.remember("a", 1)
    store.remember("b", {"nested": [1, 2, 3]})
    copy = MemStore()
    assert copy.restore(store.snapshot()) == 2
    assert copy.recall("a") == 1
    assert copy.recall("b") == {"nested": [1, 2, 3]}


def test_round_trip_keeps_namespaces():
    store = MemStore()
    store.namespace("users").remember("42", "maya")
    copy = MemStore()
    copy.restore(store.snapshot())
    assert copy.namespace("users").recall("42") == "maya"
    assert copy.recall("42") is None


def test_restore_replaces_existing_contents():
    store = MemStore()
    store.remember("a", 1)
    target = MemStore()
    target.remember("stale", 0)
    target.restore(store.snapshot())
    assert target.keys() == ["a"]


def test_snapshot_skips_expired_entries():
    clock = ManualClock()
    store = MemStore(clock=clock)
    store.remember("short", 1, ttl=1)
    store.remember("long", 2)
    clock.advance(5)
    entries = json.loads(store.snapshot())["entries"]
    assert [entry["key"] for entry in entries] == ["long"]


def test_snapshot_is_json_with_a_version():
    store = MemStore()
    store.remember("a", 1)
    document = json.loads(store.snapshot())
    assert document["version"] == 1


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        '{"version": 99, "entries": []}',
        '{"version": 1}',
        '{"version": 1, "entries": [{"key": "a"}]}',
    ],
)
def test_invalid_snapshot_is_rejected_without_changes(text):
    store = MemStore()
    store.remember("a", 1)
    with pytest.raises(SnapshotError):
        store.restore(text)
    assert store.recall("a") == 1


def test_unserialisable_value_raises_type_error():
    store = MemStore()
    store.remember("a", object())
    with pytest.raises(TypeError):
        store.snapshot()
