import pytest

from memstore import MemStore


def test_remember_and_recall():
    store = MemStore()
    store.remember("a", 1)
    assert store.recall("a") == 1


def test_recall_missing_returns_default():
    store = MemStore()
    assert store.recall("nope") is None
    assert store.recall("nope", default="fallback") == "fallback"


def test_remember_replaces_value():
    store = MemStore()
    store.remember("a", 1)
    store.remember("a", 2)
    assert store.recall("a") == 2
    assert len(store) == 1


def test_none_is_a_value():
    store = MemStore()
    store.remember("a", None)
    assert "a" in store
    assert store.recall("a", default="fallback") is None


def test_forget_reports_whether_something_was_dropped():
    store = MemStore()
    store.remember("a", 1)
    assert store.forget("a") is True
    assert store.forget("a") is False
    assert store.recall("a") is None


def test_keys_in_insertion_order():
    store = MemStore()
    for key in ("b", "a", "c"):
        store.remember(key, key.upper())
    assert store.keys() == ["b", "a", "c"]
    assert list(store) == ["b", "a", "c"]


def test_clear_forgets_everything():
    store = MemStore()
    store.remember("a", 1)
    store.remember("b", 2)
    assert store.clear() == 2
    assert len(store) == 0


def test_hits_and_misses_are_counted():
    store = MemStore()
    store.remember("a", 1)
    store.recall("a")
    store.recall("a")
    store.recall("b")
    assert (store.hits, store.misses) == (2, 1)


def test_keys_must_be_strings():
    store = MemStore()
    with pytest.raises(TypeError):
        store.remember(1, "one")


@pytest.mark.parametrize("max_items", [0, -3])
def test_capacity_must_be_positive(max_items):
    with pytest.raises(ValueError):
        MemStore(max_items=max_items)
