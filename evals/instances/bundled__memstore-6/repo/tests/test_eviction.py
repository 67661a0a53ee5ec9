from memstore import ManualClock, MemStore


def fill(store, *keys):
    for key in keys:
        store.remember(key, key.upper())


def test_unbounded_store_never_evicts():
    store = MemStore()
    fill(store, *"abcdefgh")
    assert len(store) == 8


def test_least_recently_remembered_key_is_evicted():
    store = MemStore(max_items=2)
    fill(store, "a", "b", "c")
    assert store.keys() == ["b", "c"]


def test_recall_protects_a_key_from_eviction():
    store = MemStore(max_items=2)
    fill(store, "a", "b")
    store.recall("a")
    store.remember("c", "C")
    assert sorted(store.keys()) == ["a", "c"]


def test_contains_does_not_count_as_use():
    store = MemStore(max_items=2)
    fill(store, "a", "b")
    assert "a" in store
    store.remember("c", "C")
    assert "a" not in store


def test_expired_keys_make_room_before_live_ones_are_evicted():
    clock = ManualClock()
    store = MemStore(max_items=2, clock=clock)
    store.remember("old", 1, ttl=1)
    store.remember("keep", 2)
    clock.advance(2)
    store.remember("new", 3)
    assert sorted(store.keys()) == ["keep", "new"]


def test_capacity_is_shared_by_namespaces():
    store = MemStore(max_items=2)
    store.namespace("x").remember("a", 1)
    store.namespace("y").remember("a", 2)
    store.remember("a", 3)
    assert store.namespace("x").recall("a") is None
    assert len(store) == 2
