import pytest

from memstore import Event, ManualClock, MemStore


@pytest.fixture
def clock():
    return ManualClock()


@pytest.fixture
def store(clock):
    return MemStore(max_items=2, clock=clock)


def record(store, name):
    seen = []
    store.hooks.on(name, seen.append)
    return seen


def test_set_event_carries_namespace_key_and_value(store):
    seen = record(store, "set")
    store.namespace("users").remember("42", "maya")
    assert seen == [Event("set", "users", "42", "maya")]


def test_forget_event(store):
    seen = record(store, "forget")
    store.remember("a", 1)
    store.forget("a")
    store.forget("a")
    assert seen == [Event("forget", "", "a", 1)]


def test_evict_event(store):
    seen = record(store, "evict")
    for key in "abc":
        store.remember(key, key)
    assert seen == [Event("evict", "", "a", "a")]


def test_expire_event_on_access(store, clock):
    seen = record(store, "expire")
    store.remember("a", 1, ttl=1)
    clock.advance(1)
    assert store.recall("a") is None
    assert seen == [Event("expire", "", "a", 1)]


def test_callbacks_run_in_registration_order(store):
    calls = []
    store.hooks.on("set", lambda event: calls.append("first"))
    store.hooks.on("set", lambda event: calls.append("second"))
    store.remember("a", 1)
    assert calls == ["first", "second"]


def test_unsubscribe_stops_delivery(store):
    seen = []
    unsubscribe = store.hooks.on("set", seen.append)
    store.remember("a", 1)
    unsubscribe()
    store.remember("b", 2)
    assert [event.key for event in seen] == ["a"]
    assert store.hooks.count("set") == 0


def test_unknown_event_name_is_rejected(store):
    with pytest.raises(ValueError, match="unknown event"):
        store.hooks.on("sett", print)
