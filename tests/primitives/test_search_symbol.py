from pathlib import Path

from pytest_toolpolicy.primitives import Toolbox
from pytest_toolpolicy.primitives.search_symbol import is_import_path


def selectors(env):
    return [m["selector"] for m in env["data"]["matches"]]


def test_exact_name_beats_suffix_beats_substring(tmp_path: Path):
    root = tmp_path / "r"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg/__init__.py").write_text("")
    (root / "pkg/a.py").write_text(
        "def total():\n    pass\n\n\ndef subtotal():\n    pass\n\n\nclass Order:\n"
        "    def total(self):\n        pass\n"
    )
    box = Toolbox(root)
    assert selectors(box.call("search_symbol", {"query": "total"})) == [
        "pkg.a.total",
        "pkg.a.Order.total",
        "pkg.a.subtotal",
    ]
    assert selectors(box.call("search_symbol", {"query": "Order.total"}))[0] == "pkg.a.Order.total"
    assert selectors(box.call("search_symbol", {"query": "pkg.a.Order.total"})) == [
        "pkg.a.Order.total"
    ]


def test_matches_are_signature_only(box: Toolbox):
    env = box.call("search_symbol", {"query": "Cart.total"})
    match = env["data"]["matches"][0]
    assert set(match) == {"selector", "kind", "signature", "file", "start"}
    assert "return sum" not in str(env)  # never a body


def test_import_path_form_finds_the_defining_module(box: Toolbox):
    assert (
        selectors(box.call("search_symbol", {"query": "shop.Cart.add"}))[0] == "shop.cart.Cart.add"
    )
    assert is_import_path("requests.Session.send", "requests.sessions.Session.send")
    assert not is_import_path("requests.Session.send", "other.sessions.Session.send")
    assert not is_import_path("send", "requests.sessions.Session.send")


def test_keywords_boost_within_a_tier(tmp_path: Path):
    root = tmp_path / "r"
    root.mkdir()
    (root / "m.py").write_text(
        "def load_a(path):\n    pass\n\n\ndef load_b(url):\n    '''Fetch over http.'''\n"
    )
    box = Toolbox(root)
    assert selectors(box.call("search_symbol", {"query": "load"}))[0] == "m.load_a"
    boosted = box.call("search_symbol", {"query": "load", "keywords": ["http"]})
    assert selectors(boosted)[0] == "m.load_b"


def test_k_caps_and_reports_truncation(box: Toolbox):
    env = box.call("search_symbol", {"query": "shop", "k": 2})
    assert len(env["data"]["matches"]) == 2
    assert env["data"]["truncated"] and env["data"]["total"] > 2


def test_case_insensitive_and_empty_and_missing(box: Toolbox):
    # exact name (the module `cart`) first, then the case-insensitive name match (class Cart)
    assert selectors(box.call("search_symbol", {"query": "cart"}))[:2] == [
        "shop.cart",
        "shop.cart.Cart",
    ]
    assert selectors(box.call("search_symbol", {"query": "CART"}))[:2] == [
        "shop.cart",
        "shop.cart.Cart",
    ]
    assert box.call("search_symbol", {"query": "   "}) == {
        "ok": False,
        "error": "empty query",
        "data": None,
    }
    env = box.call("search_symbol", {"query": "zzzz"})
    assert env["ok"] and env["data"]["matches"] == [] and env["data"]["total"] == 0


def test_sees_edits(box: Toolbox):
    path = box.root / "src/shop/cart.py"
    path.write_text(path.read_text() + "\n\ndef brand_new():\n    pass\n")
    box.index.reindex("src/shop/cart.py")
    assert selectors(box.call("search_symbol", {"query": "brand_new"})) == ["shop.cart.brand_new"]


def test_a_query_never_matches_across_two_selectors(tmp_path: Path):
    """The substring tier scans the selectors joined by line breaks; a two-line query would
    match the end of one selector and the start of the next, a match holding neither line."""
    root = tmp_path / "r"
    (root / "cronparse").mkdir(parents=True)
    (root / "cronparse/__init__.py").write_text("")
    (root / "cronparse/a.py").write_text("def next_run():\n    pass\n")
    (root / "cronparse/b.py").write_text("def other():\n    pass\n")
    box = Toolbox(root)
    assert "cronparse.a.next_run" in selectors(box.call("search_symbol", {"query": "next_run"}))
    for query in ("next_run\ncronparse", "run\ncron", "a.next_run\ncronparse.b"):
        env = box.call("search_symbol", {"query": query})
        assert env["ok"] and selectors(env) == [], query
