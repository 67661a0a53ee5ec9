import pytest

from pytest_toolpolicy.primitives import Toolbox


def test_record_without_body(box: Toolbox):
    env = box.call("read_entity", {"selector": "shop.cart.Cart.add"})
    assert env["ok"] and env["error"] is None
    entity = env["data"]["entity"]
    assert entity["signature"] == "def add(self, name, price):"
    assert entity["kind"] == "method" and entity["file"] == "src/shop/cart.py"
    assert env["data"]["body"] is None and env["data"]["lines"] is None


def test_body_is_windowed(box: Toolbox):
    full = box.call("read_entity", {"selector": "shop.cart.Cart", "body": True})["data"]
    assert full["body"].startswith("class Cart:") and not full["truncated"]
    short = box.call("read_entity", {"selector": "shop.cart.Cart", "body": True, "window": 2})
    assert short["data"]["body"] == 'class Cart:\n    """A cart of priced items.'
    assert short["data"]["lines"] == [6, 7] and short["data"]["truncated"]


def test_broken_module_is_readable_with_its_error(box: Toolbox):
    env = box.call("read_entity", {"selector": "shop.broken", "body": True})
    assert env["ok"] and env["data"]["entity"]["error"].startswith("SyntaxError")
    assert env["data"]["body"] == "def oops(:\n    pass"


def test_unknown_selector_suggests_the_defining_path(box: Toolbox):
    env = box.call("read_entity", {"selector": "shop.Cart.add"})
    assert env == {
        "ok": False,
        "error": "unknown selector shop.Cart.add (did you mean shop.cart.Cart.add?)",
        "data": None,
    }
    assert (
        box.call("read_entity", {"selector": "shop.nope"})["error"] == "unknown selector shop.nope"
    )


@pytest.mark.parametrize(
    "selector", ["../etc/passwd", "/etc/passwd", "shop/cart.py", "shop..cart", ""]
)
def test_selectors_that_are_paths_are_refused(box: Toolbox, selector: str):
    env = box.call("read_entity", {"selector": selector})
    assert not env["ok"] and env["error"].startswith("invalid selector")


def test_spans_follow_a_file_changed_behind_the_index(box: Toolbox):
    """Changed on disk with no refresh (a memo replay, a missed hook): the record and the body
    are those of the file as it is, never stale line numbers over new text."""
    cart = box.root / "src/shop/cart.py"
    cart.write_text("# a new first line\n\n" + cart.read_text())
    env = box.call("read_entity", {"selector": "shop.cart.helper", "body": True})
    assert env["ok"] and env["data"]["body"] == "def helper(x): return x * 2"
    assert env["data"]["lines"] == [34, 34]


def test_a_removed_module_says_so(box: Toolbox):
    (box.root / "src/shop/cart.py").unlink()
    env = box.call("read_entity", {"selector": "shop.cart.Cart.add", "body": True})
    assert env == {
        "ok": False,
        "error": "shop.cart.Cart.add is unavailable: src/shop/cart.py no longer exists",
        "data": None,
    }
