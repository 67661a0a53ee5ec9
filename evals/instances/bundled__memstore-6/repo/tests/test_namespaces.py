import pytest

from memstore import MemStore
from memstore.namespaces import qualify, split


@pytest.fixture
def store():
    return MemStore()


def test_namespaces_keep_equal_keys_apart(store):
    store.namespace("users").remember("42", "maya")
    store.namespace("orders").remember("42", "order #42")
    assert store.namespace("users").recall("42") == "maya"
    assert store.namespace("orders").recall("42") == "order #42"
    assert store.recall("42") is None


def test_keyword_and_view_are_the_same_namespace(store):
    store.remember("a", 1, namespace="n")
    assert store.namespace("n").recall("a") == 1
    assert "a" in store.namespace("n")


def test_namespace_keys_and_len(store):
    users = store.namespace("users")
    users.remember("1", "a")
    users.remember("2", "b")
    store.remember("3", "c")
    assert users.keys() == ["1", "2"]
    assert len(users) == 2
    assert store.keys() == ["3"]


def test_clearing_a_namespace_leaves_the_others(store):
    store.namespace("a").remember("k", 1)
    store.namespace("b").remember("k", 2)
    assert store.namespace("a").clear() == 1
    assert store.namespace("b").recall("k") == 2


def test_namespace_names_may_not_contain_the_separator(store):
    with pytest.raises(ValueError):
        store.namespace("a:b")


def test_default_namespace_keys_may_contain_the_separator(store):
    store.remember("https://example.com/a", "page")
    assert store.recall("https://example.com/a") == "page"
    assert store.forget("https://example.com/a") is True


def test_namespace_view_repr(store):
    assert repr(store.namespace("users")) == "Namespace('users')"


def test_qualify_and_split_round_trip():
    assert split(qualify("users", "42")) == ("users", "42")
