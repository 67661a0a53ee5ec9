import pytest

from memstore import ManualClock, MemStore


@pytest.fixture
def clock():
    return ManualClock(1000.0)


@pytest.fixture
def store(clock):
    return MemStore(clock=clock)


def test_value_lives_until_its_ttl(store, clock):
    store.remember("a", 1, ttl=10)
    clock.advance(9.9)
    assert store.recall("a") == 1


def test_value_is_gone_at_its_ttl(store, clock):
    store.remember("a", 1, ttl=10)
    clock.advance(10)
    assert store.recall("a") is None
    assert "a" not in store


def test_without_ttl_value_never_expires(store, clock):
    store.remember("a", 1)
    clock.advance(10**9)
    assert store.recall("a") == 1


def test_remember_resets_ttl(store, clock):
    store.remember("a", 1, ttl=10)
    clock.advance(8)
    store.remember("a", 2, ttl=10)
    clock.advance(8)
    assert store.recall("a") == 2


def test_len_and_keys_skip_expired(store, clock):
    store.remember("a", 1, ttl=5)
    store.remember("b", 2)
    clock.advance(5)
    assert len(store) == 1
    assert store.keys() == ["b"]


def test_purge_expired_counts_dropped_keys(store, clock):
    store.remember("a", 1, ttl=5)
    store.remember("b", 2, ttl=50)
    store.remember("c", 3)
    clock.advance(6)
    assert store.purge_expired() == 1
    assert store.keys() == ["b", "c"]


def test_forgetting_expired_key_reports_false(store, clock):
    store.remember("a", 1, ttl=5)
    clock.advance(5)
    assert store.forget("a") is False


@pytest.mark.parametrize("ttl", [0, -1])
def test_ttl_must_be_positive(store, ttl):
    with pytest.raises(ValueError):
        store.remember("a", 1, ttl=ttl)


def test_manual_clock_cannot_go_backwards(clock):
    with pytest.raises(ValueError):
        clock.advance(-1)
