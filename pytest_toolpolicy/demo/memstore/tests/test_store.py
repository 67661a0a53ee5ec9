from memstore import MemStore


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_remember_and_recall():
    store = MemStore()
    store.remember("a", 1)
    assert store.recall("a") == 1


def test_expired_value_is_gone():
    clock = FakeClock()
    store = MemStore(clock)
    store.remember("a", 1, ttl=10)
    clock.now = 10
    assert store.recall("a") is None


def test_len_counts_only_live_items():
    clock = FakeClock()
    store = MemStore(clock)
    store.remember("a", 1, ttl=5)
    store.remember("b", 2)
    clock.now = 6
    assert len(store) == 1
